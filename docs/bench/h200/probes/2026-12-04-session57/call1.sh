#!/bin/bash
# Session 57, call 1: a full-grid record run of the kernels of step 92 (main at the session's
# start), every installed peer, forward and backward; session 32's record32.sh with a larger
# torch.compile budget (COMPILE_BUDGET seconds of compiling) and the plots rendered afterwards
# from results.json (--from-json) off the GPU machine. grid_summary.py checks issue 4's targets.
# Run from the repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout -s INT ${HARNESS_LIMIT:-470} python3 -m benchmarks.rmsnorm --device cuda --out $OUT/full \
  --only fwd,bwd --no-plots --compile-budget ${COMPILE_BUDGET:-200} \
  --time-budget ${TIME_BUDGET:-430} --compare docs/bench/h200/results.json.gz \
  > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-02-session32/grid_summary.py $OUT/full/results.json \
  > $OUT/summary.txt
head -8 $OUT/summary.txt; grep -c "^  " $OUT/summary.txt
