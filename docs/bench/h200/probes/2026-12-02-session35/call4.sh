#!/bin/bash
# Session 35 call 4. Call 3 ran these same steps without the `timeout` wrappers and hung (a run
# of no chunks never completed; fixed for this call). The fold without a grid barrier (working
# tree: run counters, each run folded once its chunks are published) against HEAD (.device/head):
# dx/dw bits on 10 shapes (default grid and grid 37), the GPU suite on the working tree, then
# rows_ab (B: the working tree, V: HEAD; B/V < 1: the working tree is faster).
D=docs/bench/h200/probes/2026-12-02-session35
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
SH=16384x2048,16384x4096,16384x6144,65536x2048,4096x4096,1024x4096,1024x8192,3001x2048,4096x64,20000x1536
t0=$(date +%s)
mv $PKG /tmp/pkgB && cp -r .device/head/$PKG $PKG
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
python3 $D/bits.py save /tmp/bits.pt $SH
python3 $D/bits.py save /tmp/bits_r.pt 16384x4096,4096x6144,1024x2048 residual fp32
rm -rf $PKG && mv /tmp/pkgB $PKG
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/v.log 2>&1 || { tail -20 /tmp/v.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 $D/bits.py compare /tmp/bits.pt $SH
timeout -s KILL 120 python3 $D/bits.py compare /tmp/bits_r.pt 16384x4096,4096x6144,1024x2048 residual fp32
timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
  | tee $OUT/suite.log | tail -4
echo "suite $(( $(date +%s) - t0 )) s"
V=head MODULES=miles_rmsnorm_bwd timeout -s KILL 200 bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | grep --line-buffered -v "^B \|^head "
