#!/bin/bash
# Session 40 call 5: timelines of the stealing probe (.device/steal, per-CTA stamps), stealing on
# (mode 0) and off (mode 1), at 16384 x 4096 and 16384 x 3072.
D=docs/bench/h200/probes/2026-12-02-session40
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
mv $PKG /tmp/pkgB && cp -r .device/steal/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
for m in 0 1; do
  MILES_STEAL_MODE=$m timeout -s KILL 60 python3 $D/tl.py 16384x4096,16384x3072 2> /tmp/tl$m.txt
  cp /tmp/tl$m.txt $OUT/timeline_steal_mode$m.txt
  echo "== mode $m"; python3 $D/tl_summary.py /tmp/tl$m.txt
done
rm -rf $PKG && mv /tmp/pkgB $PKG
