#!/bin/bash
# Session 36 call 1: the backward row loop's lean form (working tree: a power-of-two hidden size's
# mean as a multiplication, the ring's slots from one address a stage) against HEAD's package
# (.device/head): dx/dw bits, then rows_ab timings (B = working tree, V = head).
S34=docs/bench/h200/probes/2026-12-02-session34
S35=docs/bench/h200/probes/2026-12-02-session35
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x2048,16384x4096,16384x8192,65536x2048,4096x4096,1024x4096,1024x8192,3001x2048,4096x64,20000x1536,16384x2880,1000x2560
RSH=16384x4096,3001x2048,1000x2560,4096x6144
build() { timeout -s KILL 240 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  --module miles_rmsnorm_bwd > /tmp/build_$1.log 2>&1 || { tail -20 /tmp/build_$1.log; exit 1; }; }
build B
mv $PKG /tmp/pkgB && cp -r .device/head/$PKG $PKG
build head
timeout -s KILL 60 python3 $S35/bits.py save /tmp/p.pt $SH
timeout -s KILL 60 python3 $S35/bits.py save /tmp/r.pt $RSH residual fp32
rm -rf $PKG && mv /tmp/pkgB $PKG
timeout -s KILL 60 python3 $S35/bits.py compare /tmp/p.pt $SH
timeout -s KILL 60 python3 $S35/bits.py compare /tmp/r.pt $RSH residual fp32
V=head MODULES=miles_rmsnorm_bwd \
  RUNS="bwd plain bf16 16384x2048,16384x4096,16384x8192,65536x4096,4096x4096,1024x4096;bwd plain bf16 16384x6144,3001x2048" \
  timeout -s KILL 330 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
