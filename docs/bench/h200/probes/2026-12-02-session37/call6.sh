#!/bin/bash
# Session 37 call 6: x (and u) loaded with an L2 evict_last policy (xel.patch on HEAD's package,
# .device/xel) against HEAD at large T, B V V B (call 3's A/B, which failed on a stale
# build.json).
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
V=xel MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 16384x8192,65536x8192,16384x4096;fwd residual bf16 16384x4096,4096x6144" \
  timeout -s KILL 300 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^xel "
