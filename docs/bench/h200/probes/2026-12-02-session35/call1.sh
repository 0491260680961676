#!/bin/bash
# Session 35 call 1: fold18 (fold_partials: a run's loads issued together, tiles spread over the
# grid) against the working tree: dx/dw bits, then rows_ab timings.
D=docs/bench/h200/probes/2026-12-02-session35
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x2048,16384x4096,16384x6144,65536x2048,4096x4096,1024x4096,1024x8192,3001x2048,4096x64,20000x1536
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
python3 $D/bits.py save /tmp/bits.pt $SH
mv $PKG /tmp/pkgB && cp -r .device/$V/$PKG $PKG
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -20 /tmp/v.log; exit 1; }
python3 $D/bits.py compare /tmp/bits.pt $SH
rm -rf $PKG && mv /tmp/pkgB $PKG
MODULES=miles_rmsnorm_bwd bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | grep -v "^B \|^$V "
