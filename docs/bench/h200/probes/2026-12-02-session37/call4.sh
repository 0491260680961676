#!/bin/bash
# Session 37 call 4: the fixed sizes' streaming instance (forward_fixed_kernel, SMALL_BATCH =
# false) against the loop-free kernel it replaces (MILES_EXT_KERNELS_FIXED_STREAM=0), one build:
# y / rstd bits, then B V V B timings (B: the streaming instance).
D=docs/bench/h200/probes/2026-12-02-session37
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 200 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/b.log 2>&1 \
  || { tail -20 /tmp/b.log; exit 1; }
SH=2048x2048,1024x4096,600x5120,4096x6144,300x8192,1200x8192
MILES_EXT_KERNELS_FIXED_STREAM=0 timeout -s KILL 40 python3 $D/rbits.py save /tmp/b.pt $SH
timeout -s KILL 40 python3 $D/rbits.py compare /tmp/b.pt $SH
ENVVAR=MILES_EXT_KERNELS_FIXED_STREAM ENVVAL=0 RUNS="fwd plain bf16 16384x8192,65536x8192,16384x4096,65536x4096;fwd plain bf16 16384x2048,65536x2048,16384x5120,16384x6144;fwd plain bf16 2048x2048,1024x4096,4096x4096,512x8192,1024x8192" \
  timeout -s KILL 330 bash $D/env_ab.sh 2>&1 | grep -v "^B \|^V "
