#!/bin/bash
# Session 40 call 4: the stealing probe (.device/steal) with a two-stage late-issue ring (an
# iteration refills the stage it just moved into registers) and the chunk sums in shared memory;
# MILES_STEAL_MODE 0: stealing, 1: the owner takes every block. Checks, then timings with B.
D=docs/bench/h200/probes/2026-12-02-session40
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x4096,4096x4096,2077x2560
RS=16384x4096,65536x4096,16384x2560,16384x3072
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref.pt $SH
echo "B $(timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
mv $PKG /tmp/pkgB && cp -r .device/steal/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref.pt $SH 2>&1 | tail -2
for m in 0 1 0 1; do
  echo "V mode $m $(MILES_STEAL_MODE=$m timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
done
rm -rf $PKG && mv /tmp/pkgB $PKG
echo "B $(timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
