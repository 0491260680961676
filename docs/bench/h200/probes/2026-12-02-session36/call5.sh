#!/bin/bash
# Session 36 call 5: the working tree with two CTAs a row at 33-66 x 8192 (step 71): every module
# built, the GPU suite, then y / rstd bits against HEAD's package and a short A/B.
S34=docs/bench/h200/probes/2026-12-02-session34
D=docs/bench/h200/probes/2026-12-02-session36
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
timeout -s KILL 300 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/all.log 2>&1 \
  || { tail -20 /tmp/all.log; exit 1; }
timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu \
  > /tmp/suite.log 2>&1; tail -4 /tmp/suite.log; cp /tmp/suite.log $OUT/call5_suite.log
SH=64x8192,48x8192,33x8192,66x8192,32x8192
timeout -s KILL 40 python3 $D/fbits.py save /tmp/b.pt $SH
timeout -s KILL 40 python3 $D/fbits.py save /tmp/f.pt $SH fp32
mv $PKG /tmp/pkgB && cp -r .device/head/$PKG $PKG
timeout -s KILL 100 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/h.log 2>&1
timeout -s KILL 40 python3 $D/fbits.py compare /tmp/b.pt $SH
timeout -s KILL 40 python3 $D/fbits.py compare /tmp/f.pt $SH fp32
rm -rf $PKG && mv /tmp/pkgB $PKG
V=head MODULES=miles_rmsnorm_fwd RUNS="fwd plain fp32 64x8192,48x8192;fwd plain bf16 64x8192" \
  timeout -s KILL 100 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
