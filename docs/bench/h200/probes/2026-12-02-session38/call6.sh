#!/bin/bash
# Session 38 call 6: the forward ring's row copies (forward_ring_kernel's cp.async of x) with an
# L2 evict_last policy (.device/rkeep, rkeep.patch on 4ad2c54's package) against the working
# tree (B), B V V B; B/V > 1 means the policy is faster. Plain calls at the ring's hidden sizes.
S34=docs/bench/h200/probes/2026-12-02-session34
V=rkeep MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x6144,16384x6144,16384x12288;fwd plain fp32 16384x6144" \
  timeout -s KILL 300 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^rkeep "
