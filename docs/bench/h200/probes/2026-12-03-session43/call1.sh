#!/bin/bash
# Session 43, call 1: P (the working tree: the wide instance's staged rows all read from shared
# memory before their tests, session 42's staged_loads_first.patch; per-head column tasks walk
# (token, head) instead of a division a row) against HEAD (.device/old: A), and the column
# clusters spread over more SMs (V: P with vectors_knob.py, MEK_PROBE_COLUMN_VECTORS 4 and 2):
# window_sweep.py (session 28) over the column clusters' shapes, the stamped probe (phases and
# SMs), the GPU suite on P, the harness (ours, per-head strided, T 64) on A and P.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
stamps_build . P
copy_tree old || exit 1
knob V
build_all 12 /tmp/old:A /tmp/V:V
stamps_run P a
sweep /tmp/old A; sweep . P
export MEK_PROBE_COLUMN_VECTORS=4; sweep /tmp/V V4
export MEK_PROBE_COLUMN_VECTORS=2; sweep /tmp/V V2
unset MEK_PROBE_COLUMN_VECTORS
sweep /tmp/old A2; sweep . P2
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
harness /tmp/old A; harness . P
grep -h "24 of 32\|per.head" $OUT/harness_*.md | head -8
cat $OUT/stamps_P.txt | cut -c1-120
table A P V4 V2 A2 P2
