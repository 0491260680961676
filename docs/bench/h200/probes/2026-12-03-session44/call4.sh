#!/bin/bash
# Session 44, call 4: the final sources after the review (column_block_sums decodes its task
# once; sm_90a SASS as call 2's but for one add's operand order): the GPU suite and the harness
# (ours, per-head strided, T 16 and 64), then window_sweep.py (session 28) over the column
# clusters' shapes if the call's time allows. Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
harness . F
grep -H "strided" $OUT/harness_F.md
sweep . F
table F | tee $OUT/table.txt
mkdir -p /tmp/sweeps && mv $OUT/sweep_* /tmp/sweeps/
