#!/bin/bash
# Session 33, call 7: the forward's bits tests as extended for steps 66-67 (one row a group past
# the spread window below the two-row threshold; FP32 weights at H = 256 on both sides of it).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "loop_free_forward or fp32_weight_forward" 2>&1 | tee $OUT/call7_tests.log | tail -4
echo "tests $(( $(date +%s) - t0 )) s"
