#!/bin/bash
# Session 40 call 2: where the stealing probe's time goes. Variants of .device/steal selected by
# MILES_STEAL_VARIANT (2: two-stage ring, chunk sums in shared memory; 3: three-stage ring, chunk
# sums added into the partial with red.global.add.f64) and MILES_STEAL_MODE (0: stealing; 1: the
# owner takes every block, no claims, no thieves; 2: owner claims, no thieves); B: the working
# tree. Checks first (dx bits against B, dw bits over grids, dw against FP64), then timings.
D=docs/bench/h200/probes/2026-12-02-session40
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x4096,4096x4096,2077x2560
RS=16384x4096,65536x4096,16384x2560
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref.pt $SH
echo "B $(timeout -s KILL 60 python3 docs/bench/h200/probes/2026-12-02-session34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
mv $PKG /tmp/pkgB && cp -r .device/steal/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
MILES_STEAL_VARIANT=3 timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref.pt $SH 2>&1 | tail -2
for vm in "2 0" "2 1" "3 0" "3 1" "3 2"; do
  set -- $vm
  echo "V$1 mode $2 $(MILES_STEAL_VARIANT=$1 MILES_STEAL_MODE=$2 timeout -s KILL 60 python3 docs/bench/h200/probes/2026-12-02-session34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
done
rm -rf $PKG && mv /tmp/pkgB $PKG
echo "B $(timeout -s KILL 60 python3 docs/bench/h200/probes/2026-12-02-session34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
