#!/bin/bash
# Session 25's record run at small T (no GPU code changed since the last GPU suite on these
# sources): build, then the harness's backward and forward at T 1, 16, 64, 256 with every peer
# (all families, BF16 and FP32 weights), each summarised by smallt_summary.py. ROWS (session 26's
# knob, added after this session's run): other row counts (session 26: ROWS=1 OPS=bwd).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session25
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for op in ${OPS:-bwd fwd}; do
  python3 -m benchmarks.rmsnorm --device cuda --only $op --no-plots --no-host-overhead \
    --rows ${ROWS:-1,16,64,256} --candidates ours,torch,aten,compile,liger --ours-backends first_party \
    --compile-budget ${COMPILE_BUDGET:-120} --time-budget 240 --out $OUT/$op > /tmp/$op.log 2>&1 || tail -20 /tmp/$op.log
  echo "$op $(( $(date +%s) - t0 )) s"
  python3 $P/smallt_summary.py $OUT/$op/results.json $op
done
