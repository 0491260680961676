#!/bin/bash
# Session 44, call 1: the column tasks' addressing (M: the working tree: 32-bit row offsets, the
# piece's offset folded in, the cluster tasks decoded from the cluster registers; N: .device/N,
# the 32-bit offsets alone) against HEAD f9ee938 (.device/old: A). In the order that matters if the
# call is cut short: the GPU suite on M, the stamped probe (per-head view) of each, window_sweep.py
# (session 28) over the column clusters' shapes, the harness (ours, per-head strided, T 16 and 64).
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
copy_tree old || exit 1
copy_tree N || exit 1
stamps_build /tmp/old A; stamps_build /tmp/N N; stamps_build . M
build_all 12 /tmp/old:A /tmp/N:N
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
stamps_run A; stamps_run N; stamps_run M
sweep /tmp/old A; sweep /tmp/N N; sweep . M; sweep . M2
harness . M; harness /tmp/old A; harness /tmp/N N
grep -H "strided" $OUT/harness_*.md
for n in A N M; do echo "== $n"; cut -c1-110 $OUT/stamps_$n.txt | head -9; done
table A N M M2 | tee $OUT/table.txt
mkdir -p /tmp/sweeps && mv $OUT/sweep_* /tmp/sweeps/
