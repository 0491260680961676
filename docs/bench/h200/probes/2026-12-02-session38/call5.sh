#!/bin/bash
# Session 38 call 5: the deterministic backward's row copies (issue_rows' cp.async of g and x)
# with an L2 cache hint: evict_last (.device/bkeep) and evict_first (.device/bfirst), each against
# the working tree (B), B V V B; B/V > 1 means the variant is faster. Patches: bkeep.patch,
# bfirst.patch.
S34=docs/bench/h200/probes/2026-12-02-session34
RUNS="bwd plain bf16 16384x2048,16384x4096,65536x4096,4096x4096;bwd plain fp32 16384x4096;bwd residual bf16 16384x4096"
for v in bkeep bfirst; do
  echo "== $v"
  V=$v MODULES=miles_rmsnorm_bwd RUNS="$RUNS" timeout -s KILL 270 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^$v "
done
