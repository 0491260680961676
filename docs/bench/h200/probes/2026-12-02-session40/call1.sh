#!/bin/bash
# Session 40 call 1: the block-stealing probe (.device/steal) — dx bits against the working
# tree's build (B), dw bits over repeats and forced grids, dw against FP64; then B V V B timings.
D=docs/bench/h200/probes/2026-12-02-session40
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x4096,16384x3072,4096x4096,2077x2560,16384x2048
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref.pt $SH
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref32.pt 16384x4096,2077x2560 fp32
mv $PKG /tmp/pkgB && cp -r .device/steal/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref.pt $SH 2>&1 | tail -3
timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref32.pt 16384x4096,2077x2560 fp32 2>&1 | tail -3
rm -rf $PKG && mv /tmp/pkgB $PKG
V=steal MODULES=miles_rmsnorm_bwd RUNS="bwd plain bf16 16384x4096,16384x3072,16384x2560,4096x4096,65536x4096;bwd plain fp32 16384x4096,16384x3072" \
  timeout -s KILL 240 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^steal "
