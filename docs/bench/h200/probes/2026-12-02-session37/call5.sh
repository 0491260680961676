#!/bin/bash
# Session 37 call 5: the streaming fixed instance with the weights' loads first (WEIGHTS_FIRST)
# against the loop-free kernel (MILES_EXT_KERNELS_FIXED_STREAM=0); then the residual halves
# against one CTA a row (MILES_EXT_KERNELS_FIXED_HALVES=0, a probe hook), one build, B V V B.
D=docs/bench/h200/probes/2026-12-02-session37
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 200 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/b.log 2>&1 \
  || { tail -20 /tmp/b.log; exit 1; }
SH=2048x2048,1024x4096,4096x6144,1200x8192
MILES_EXT_KERNELS_FIXED_STREAM=0 timeout -s KILL 40 python3 $D/rbits.py save /tmp/b.pt $SH
timeout -s KILL 40 python3 $D/rbits.py compare /tmp/b.pt $SH
ENVVAR=MILES_EXT_KERNELS_FIXED_STREAM ENVVAL=0 RUNS="fwd plain bf16 16384x8192,16384x4096,4096x4096,1024x8192,512x8192" \
  timeout -s KILL 120 bash $D/env_ab.sh 2>&1 | grep -v "^B \|^V "
ENVVAR=MILES_EXT_KERNELS_FIXED_HALVES ENVVAL=0 RUNS="fwd residual bf16 64x6144,56x6144,48x6144,40x6144,64x4096,48x4096,64x8192,48x8192;fwd residual fp32 64x6144,48x6144" \
  timeout -s KILL 150 bash $D/env_ab.sh 2>&1 | grep -v "^B \|^V "
