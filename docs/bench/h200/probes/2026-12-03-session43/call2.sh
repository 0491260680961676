#!/bin/bash
# Session 43, call 2: the wide instance's column tasks split over kRowColumnWideSplit threads a
# vector (S2: the working tree, 2, eight-byte pieces; S4: .device/s4, 4, four-byte pieces; both
# with call 1's P) against HEAD (.device/old: A): window_sweep.py (session 28) over the column
# clusters' shapes, the stamped probe (per-head view) of each, the GPU suite on S2, the harness
# (ours, per-head strided, T 16 and 64) on each. Run from the repository root, .whl and .device
# carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
copy_tree old || exit 1
copy_tree s4 || exit 1
stamps_build /tmp/old A; stamps_build . S2; stamps_build /tmp/s4 S4
build_all 12 /tmp/old:A /tmp/s4:S4
stamps_run A; stamps_run S2; stamps_run S4
sweep /tmp/old A; sweep . S2; sweep /tmp/s4 S4; sweep /tmp/old A2; sweep . S2b; sweep /tmp/s4 S4b
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
harness /tmp/old A; harness . S2; harness /tmp/s4 S4
grep -H "strided" $OUT/harness_*.md
for n in A S2 S4; do echo "== $n"; cut -c1-110 $OUT/stamps_$n.txt; done
table A S2 S4 A2 S2b S4b
