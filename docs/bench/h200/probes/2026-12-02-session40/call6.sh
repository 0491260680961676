#!/bin/bash
# Session 40 call 6: the deterministic backward's chunk partition balanced (MILES_BAL=1: chunk c
# holds rows [c T / n, (c + 1) T / n), sizes differing by at most one row, instead of ceil(T / n)
# rows each and a short or empty tail) and its chunk partials stored with an L2 evict_last policy
# (MILES_PKEEP=1), .device/part against the working tree (B). Checks, then timings.
D=docs/bench/h200/probes/2026-12-02-session40
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x4096,4096x4096,2077x2560,16384x2048
RS=16384x4096,16384x2048,65536x4096,4096x4096
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref.pt $SH
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref32.pt 16384x4096,2077x2560 fp32
echo "B $(timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
mv $PKG /tmp/pkgB && cp -r .device/part/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
MILES_BAL=1 MILES_PKEEP=1 timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref.pt $SH 2>&1 | tail -1
MILES_BAL=1 MILES_PKEEP=1 timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref32.pt 16384x4096,2077x2560 fp32 2>&1 | tail -1
for bk in "0 0" "1 0" "0 1" "1 1" "1 1" "1 0" "0 1" "0 0"; do
  set -- $bk
  echo "bal $1 keep $2 $(MILES_BAL=$1 MILES_PKEEP=$2 timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
done
rm -rf $PKG && mv /tmp/pkgB $PKG
echo "B $(timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
