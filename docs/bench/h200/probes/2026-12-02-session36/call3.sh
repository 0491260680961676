#!/bin/bash
# Session 36 call 3: the T = 33-66 plain forward at the fixed sizes with two CTAs a row, each
# reading the whole row and storing half of y (.device/halves, halves.patch), against HEAD: y and
# rstd bits, then rows_ab (B = HEAD, V = halves).
S34=docs/bench/h200/probes/2026-12-02-session34
D=docs/bench/h200/probes/2026-12-02-session36
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=64x8192,48x8192,64x6144,64x5120,64x4096,40x2048,17x8192,66x8192
build() { timeout -s KILL 240 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  --module miles_rmsnorm_fwd > /tmp/build_$1.log 2>&1 || { tail -20 /tmp/build_$1.log; exit 1; }; }
build B
timeout -s KILL 60 python3 $D/fbits.py save /tmp/b.pt $SH
timeout -s KILL 60 python3 $D/fbits.py save /tmp/f.pt $SH fp32
mv $PKG /tmp/pkgB && cp -r .device/halves/$PKG $PKG
build halves
timeout -s KILL 60 python3 $D/fbits.py compare /tmp/b.pt $SH
timeout -s KILL 60 python3 $D/fbits.py compare /tmp/f.pt $SH fp32
rm -rf $PKG && mv /tmp/pkgB $PKG
V=halves MODULES=miles_rmsnorm_fwd \
  RUNS="fwd plain fp32 64x8192,48x8192,64x6144,64x5120;fwd plain bf16 64x8192,64x6144,64x4096,40x2048" \
  timeout -s KILL 300 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^halves "
