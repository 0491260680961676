#!/bin/bash
# Session 57, call 1: a full-grid record run of the kernels of step 92 (main at the session's
# start), every installed peer, forward and backward; session 32's record32.sh with a larger
# torch.compile budget (COMPILE_BUDGET seconds of compiling) and the plots rendered afterwards
# from results.json (--from-json) off the GPU machine. grid_summary.py checks issue 4's targets.
# Run from the repository root on the GPU machine, .whl carried. (As run, the call wrote
# record32.sh's setup lines out; they are common.sh's, which it sources now: the same commands.)
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "build $(( $(date +%s) - t0 )) s"
timeout -s INT ${HARNESS_LIMIT:-470} python3 -m benchmarks.rmsnorm --device cuda --out $OUT/full \
  --only fwd,bwd --no-plots --compile-budget ${COMPILE_BUDGET:-200} \
  --time-budget ${TIME_BUDGET:-430} --compare docs/bench/h200/results.json.gz \
  > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-02-session32/grid_summary.py $OUT/full/results.json \
  > $OUT/summary.txt
head -8 $OUT/summary.txt; grep -c "^  " $OUT/summary.txt
