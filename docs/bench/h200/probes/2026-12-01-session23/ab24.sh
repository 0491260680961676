#!/bin/bash
# Session 23, call 6 (from .device/, with ab22.sh of session 22 there): the small-batch window at
# H <= 512, B 2048 rows against HEAD 84059e3 (A) 32: grid rows (and the GPU suite on B), then
# rows off the grid.
SUITE_FIRST=1 PASSES=1 FAMILIES=plain,per_head_strided,per_head_contig ROWS=16,64,256,1024 HIDDEN=256,512 bash .device/ab22.sh
mkdir -p $OUT/grid && mv $OUT/A1 $OUT/B1 $OUT/grid/
NO_SUITE=1 PASSES=1 FAMILIES=plain ROWS=48,96,128,192,384,512,768,1536,2048 HIDDEN=256,512 HARNESS="python3 docs/bench/h200/probes/2026-12-01-session23/rows_ab.py" bash .device/ab22.sh
