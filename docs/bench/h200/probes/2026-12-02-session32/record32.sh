#!/bin/bash
# Session 32's full-grid record run (the headline docs/bench/h200/results.{json,md} and plots):
# build, then the harness over the whole grid, forward and backward, every installed peer
# (torch.compile within COMPILE_BUDGET seconds of compiling, which covers the quick set first),
# compared with the previous headline run; grid_summary.py prints the checks last.
# Run from the repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m benchmarks.rmsnorm --device cuda --out $OUT/full --only fwd,bwd \
  --compile-budget ${COMPILE_BUDGET:-90} --time-budget ${TIME_BUDGET:-480} \
  --compare docs/bench/h200/results.json.gz > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-02-session32/grid_summary.py $OUT/full/results.json
