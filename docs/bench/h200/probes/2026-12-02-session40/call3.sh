#!/bin/bash
# Session 40 call 3: timelines of the deterministic backward (.device/skew: HEAD's kernels with
# per-CTA stamps and an optional static skew of the chunk sizes), then the skew's timings.
D=docs/bench/h200/probes/2026-12-02-session40
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
RS=16384x4096,16384x2048,65536x4096
mv $PKG /tmp/pkgB && cp -r .device/skew/$PKG $PKG
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd > /tmp/v.log 2>&1 || { tail -30 /tmp/v.log; rm -rf $PKG; mv /tmp/pkgB $PKG; exit 1; }
timeout -s KILL 60 python3 $D/tl.py 16384x4096,16384x2048 2> /tmp/tl0.txt
cp /tmp/tl0.txt $OUT/timeline_skew0.txt
python3 $D/tl_summary.py /tmp/tl0.txt
timeout -s KILL 60 python3 $D/steal_check.py save /tmp/ref.pt 16384x4096,2077x2560,16384x2048
MILES_SKEW=80 timeout -s KILL 60 python3 $D/steal_check.py check /tmp/ref.pt 16384x4096,2077x2560,16384x2048 2>&1 | tail -1
for sk in "0 0" "50 0" "100 0" "-50 0" "50 1" "100 1" "0 0"; do
  set -- $sk
  echo "skew $1 mode $2 $(MILES_SKEW=$1 MILES_SKEW_MODE=$2 timeout -s KILL 60 python3 $S34/rows.py bwd plain bf16 $RS 2>&1 | tail -1)"
done
rm -rf $PKG && mv /tmp/pkgB $PKG
