#!/bin/bash
# Session 44, call 3: two variants of the landed sources (M, the working tree) for the wide split
# instance's rows: B12 (.device/B12: the split instance loads 12 rows of a task into registers,
# then stages 8 more where the task has them) and V2 (.device/V2: the register batch's loads issued
# before the staged rows' copies). window_sweep.py (session 28) over the column clusters' shapes
# (M twice) and the harness (ours, per-head strided, T 16 and 64). Run from the repository root,
# .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
copy_tree B12 || exit 1
copy_tree V2 || exit 1
build_all 12 /tmp/B12:B12 /tmp/V2:V2
sweep . M; sweep /tmp/B12 B12; sweep /tmp/V2 V2; sweep . M2; sweep /tmp/B12 B12b; sweep /tmp/V2 V2b
harness . M; harness /tmp/B12 B12; harness /tmp/V2 V2
grep -H "strided" $OUT/harness_*.md
table M B12 V2 M2 B12b V2b | tee $OUT/table.txt
mkdir -p /tmp/sweeps && mv $OUT/sweep_* /tmp/sweeps/
