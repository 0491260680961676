#!/bin/bash
# Session 38 call 4: the streaming forward rows steps 72-73 changed (H 2048-16384, T 16384 and
# 65536, plain and residual, BF16 weights) with Liger, PyTorch's fused op and torch.compile
# (COMPILE_BUDGET seconds of compiling), compared with session 32's full-grid run.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout -s KILL 420 python3 -m benchmarks.rmsnorm --device cuda --out $OUT/peers --only fwd --no-plots \
  --no-host-overhead --candidates ours,aten,compile,liger --rows 16384,65536 \
  --hidden 2048,4096,6144,8192,16384 --families plain,residual --weights bf16 \
  --compile-budget ${COMPILE_BUDGET:-120} --time-budget 280 \
  --compare docs/bench/h200/full_s32/results.json.gz > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
head -60 $OUT/peers/results.md
