#!/bin/bash
# Session 33, call 4: the forward rows steps 65-66 changed (H 256 and 512, T 1024-65536, plain
# BF16 / FP32 weights, and the per-head views at H = 256), with Liger, PyTorch's fused op and
# torch.compile (COMPILE_BUDGET seconds of compiling), compared with session 32's full-grid run.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m benchmarks.rmsnorm --device cuda --out $OUT/peers --only fwd --no-plots --no-host-overhead \
  --candidates ours,aten,compile,liger --rows 1024,4096,16384,65536 --hidden 256,512 \
  --families plain,per_head_contig,per_head_strided --weights bf16,fp32 \
  --compile-budget ${COMPILE_BUDGET:-150} --time-budget 300 \
  --compare docs/bench/h200/full_s32/results.json.gz > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
cat $OUT/peers/results.md | head -80
