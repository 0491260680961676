#!/bin/bash
# Session 34, call 1: session 33's review on the GPU. The working tree has the shared loop-free
# row end (finish_loop_free_row.patch) applied; vhead is HEAD's package (802672c). The forward's
# GPU bits tests (now with FP32 weights in the loop-free test), then vhead against the working
# tree on the residual form with FP32 weights at H 896-1536 (the 7 kernels whose registers moved).
O=$OUT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "forward and not backward" 2>&1 | tee $O/call1_tests.log | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
mkdir -p $O/p
OUT=$O/p VARIANTS="vhead" TIME_BUDGET=150 SETS="4096,16384:896,1024,1536:residual:fp32" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call1.txt
rm -rf $O/p
