#!/bin/bash
# Session 39 call 1: the forward ring's x copies with an L2 evict_last policy (.device/rkeep:
# session 38's rkeep.patch on 966c672's package) against the working tree (B), B V V B, at more
# of the ring's shapes (plain H 5128-6144 and 8200-12288). B/V > 1: the policy is faster.
S34=docs/bench/h200/probes/2026-12-02-session34
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
V=rkeep MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 16384x9216,16384x10240,16384x11264,16384x12288,65536x12288,65536x10240,4096x12288,8192x10240;fwd plain fp32 16384x12288,16384x10240,65536x12288;fwd plain bf16 16384x5632,4096x6144,65536x5632" \
  timeout -s KILL 480 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^rkeep "
