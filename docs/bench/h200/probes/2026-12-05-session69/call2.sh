#!/bin/bash
# Session 69, call 2 (about 3 minutes): floor.py — the one-warp forward's kernel floor variant by
# variant (floor.cu, built here with the package's nvcc flags) against the package's call and
# torch.compile's, at 1 x 256 and 16 x 256.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session69
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
nvcc -arch=sm_90a -O3 -std=c++17 --prec-div=true --prec-sqrt=true --ftz=false -shared \
  -Xcompiler -fPIC -I $PKG/include $P/floor.cu -o /tmp/floor.so || exit 1
build_matching . F 16 'miles_rmsnorm_fwd__h256'
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 300 python3 $P/floor.py /tmp/floor.so 1,16 2>&1 | grep -v -i warn \
  | tee $OUT/floor.txt
echo "done $(( $(date +%s) - t0 )) s"
