#!/bin/bash
# Session 36 call 4: call 3's halves again, twice on the rows that moved, each run's medians kept
# (B = HEAD, V = halves).
S34=docs/bench/h200/probes/2026-12-02-session34
for round in 1 2; do
  echo "round $round"
  V=halves MODULES=miles_rmsnorm_fwd \
    RUNS="fwd plain fp32 64x8192,56x8192,64x4096,64x6144;fwd plain bf16 64x8192,32x8192,64x4096,64x5120,64x6144" \
    timeout -s KILL 270 bash $S34/rows_ab.sh 2>&1
done
