#!/bin/bash
# Session 69, call 6 (about 1.5 minutes, the session's last device time): floor.py without the
# package (no module built) — does the one-warp row sum from shared memory (the butterfly's tree,
# same bits, no dependent shuffles: tri_ieee_smem, tri_fast_smem) beat the shuffles?
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session69
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
nvcc -arch=sm_90a -O3 -std=c++17 --prec-div=true --prec-sqrt=true --ftz=false -shared \
  -Xcompiler -fPIC -I $PKG/include $P/floor.cu -o /tmp/floor.so || exit 1
echo "build $(( $(date +%s) - t0 )) s"
FLOOR_NO_PACKAGE=1 timeout -s KILL 150 python3 $P/floor.py /tmp/floor.so 1,16 2>&1 \
  | grep -v -i warn | tee $OUT/floor.txt
echo "done $(( $(date +%s) - t0 )) s"
