#!/bin/bash
# Session 36 call 2: what bounds the deterministic backward's row loop at two CTAs an SM. Three
# timing-only probe copies of HEAD's package (dx or dw wrong in each), each against HEAD with
# rows_ab: nodw (no FP64 products accumulated), nows (every weight read from one shared word:
# no weight bandwidth, no bank conflict), nored (the row sum's warp butterfly only: no shared
# level, no CTA barrier an iteration).
S34=docs/bench/h200/probes/2026-12-02-session34
for v in nodw nows nored; do
  V=$v MODULES=miles_rmsnorm_bwd RUNS="bwd plain bf16 16384x2048,16384x4096,65536x4096" \
    timeout -s KILL 190 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^$v "
done
