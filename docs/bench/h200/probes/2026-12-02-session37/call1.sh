#!/bin/bash
# Session 37 call 1: the residual form of a small batch as two CTAs a row (every fixed size of two
# vectors a thread, 33 rows up to half the SMs) against HEAD's package (.device/head): y / rstd /
# h_new bits, then B V V B timings (session 34's rows_ab.sh).
S34=docs/bench/h200/probes/2026-12-02-session34
D=docs/bench/h200/probes/2026-12-02-session37
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
timeout -s KILL 200 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/b.log 2>&1 \
  || { tail -20 /tmp/b.log; exit 1; }
SH=64x6144,48x6144,33x6144,66x6144,32x6144,64x4096,40x5120,64x8192,56x8192
timeout -s KILL 40 python3 $D/rbits.py save /tmp/b.pt $SH residual
timeout -s KILL 40 python3 $D/rbits.py save /tmp/f.pt $SH residual fp32
mv $PKG /tmp/pkgB && cp -r .device/head/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
timeout -s KILL 40 python3 $D/rbits.py compare /tmp/b.pt $SH residual
timeout -s KILL 40 python3 $D/rbits.py compare /tmp/f.pt $SH residual fp32
rm -rf $PKG && mv /tmp/pkgB $PKG
V=head MODULES=miles_rmsnorm_fwd RUNS="fwd residual bf16 64x6144,56x6144,48x6144,40x6144,33x6144;fwd residual bf16 64x4096,48x4096,64x5120,64x8192,48x8192;fwd residual fp32 64x6144,48x6144" \
  timeout -s KILL 240 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
