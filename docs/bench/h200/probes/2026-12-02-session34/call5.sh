#!/bin/bash
# Session 34, call 5: the GPU suite on the working tree (the residual backward's g_h loaded
# before the row reduction, step 69), then it against vrowend (HEAD with the shared row end) on
# residual rows the harness's grid lacks, with rows.py, B V V B.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
  | tee $OUT/call5_gpu_suite.log | tail -2
echo "suite $(( $(date +%s) - t0 )) s"
V=vrowend MODULES=miles_rmsnorm_bwd \
  RUNS="bwd residual bf16 16384x2048,16384x5120,16384x8192,4096x12288,8192x16384;bwd residual fp32 16384x6144" \
  bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | tee $OUT/call5.txt
