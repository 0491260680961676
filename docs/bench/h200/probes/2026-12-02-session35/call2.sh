#!/bin/bash
# Session 35 call 2: what the backward's end phase costs. Two probe-only package copies of HEAD
# (a811789), .device/nofold (nofold.patch: the grid barrier kept, the fold skipped) and
# .device/nobar (nobar.patch: the CTA leaves once its chunk's partial is written), each timed
# against HEAD with rows_ab (dw is not computed in either: timing only).
D=docs/bench/h200/probes/2026-12-02-session35
for v in nofold nobar; do
  V=$v MODULES=miles_rmsnorm_bwd RUNS="bwd plain bf16 16384x2048,16384x4096,65536x4096,4096x4096,1024x4096" \
    bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | grep -v "^B \|^$v "
done
