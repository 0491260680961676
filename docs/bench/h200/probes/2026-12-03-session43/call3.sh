#!/bin/bash
# Session 43, call 3: the working tree (F: call 2's S2 up to H 512 only, rc.split and a kernel
# instance a split; the row-group and cluster-block folds' parts all read before their additions,
# ordered_sum) against HEAD (.device/old: A). In the order that matters if the call is cut short:
# the GPU suite on F, the harness (ours, per-head strided, T 16 and 64) and window_sweep.py
# (session 28) over the column clusters' shapes on F then A, the stamped probe of F (per-head
# view). Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
copy_tree old || exit 1
stamps_build . F
build_all 14 /tmp/old:A
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
harness . F; grep -H "strided" $OUT/harness_F.md
sweep . F; sweep /tmp/old A; table A F
harness /tmp/old A; grep -H "strided" $OUT/harness_A.md
stamps_run F; cut -c1-110 $OUT/stamps_F.txt | head -30
