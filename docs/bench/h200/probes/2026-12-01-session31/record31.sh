#!/bin/bash
# Session 31's record run with the harness's new flush (an evict_last fill, then the zero_):
# build, the flush's GPU tests, then the harness with every peer for each "op:rows" in RUNS
# (default: the forward at T 64 and 256, the backward at T 1), each summarised by session 25's
# smallt_summary.py. Run from the repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session25
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu/test_bench_flush_gpu.py 2>&1 \
  | tee $OUT/flush_tests.log | tail -2
for run in ${RUNS:-fwd:64,256 bwd:1}; do
  op=${run%%:*}; rows=${run#*:}
  python3 -m benchmarks.rmsnorm --device cuda --only $op --no-plots --no-host-overhead \
    --rows $rows --candidates ours,torch,aten,compile,liger --ours-backends first_party \
    --compile-budget ${COMPILE_BUDGET:-60} --time-budget 240 --out $OUT/$op > /tmp/$op.log 2>&1 \
    || tail -20 /tmp/$op.log
  echo "$op $(( $(date +%s) - t0 )) s"
  python3 $P/smallt_summary.py $OUT/$op/results.json $op
done
