#!/bin/bash
# Session 34 (copied in session 35): rows.py on the working tree (B) and on .device/$V's package copy, in B V V B
# order; prints each run's JSON and V / B a shape (mean of two medians each side).
#   V: the variant; RUNS: ";"-separated rows.py argument lists; MODULES: what to build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
PKG=miles_ext_kernels/kernels/rmsnorm
D=docs/bench/h200/probes/2026-12-02-session35
use() { [ "$1" = B ] || { mv $PKG /tmp/pkgB && cp -r .device/$1/$PKG $PKG; }; }
back() { [ "$1" = B ] || { rm -rf $PKG && mv /tmp/pkgB $PKG; }; }
mods=""
for m in ${MODULES:-miles_rmsnorm_fwd}; do mods="$mods --module $m"; done
for v in B $V; do
  use $v
  python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 $mods > /tmp/build.log 2>&1 \
    || { tail -30 /tmp/build.log; back $v; exit 1; }
  back $v
done
IFS=';' read -ra runs <<< "$RUNS"
for args in "${runs[@]}"; do
  for v in B $V $V B; do
    use $v
    echo "$v $(python3 $D/rows.py $args 2>&1 | tail -1)" | tee -a /tmp/rows.txt
    back $v
  done
  python3 - <<'PY'
import json
lines = [l.split(" ", 1) for l in open("/tmp/rows.txt").read().splitlines()[-4:]]
b = [json.loads(lines[0][1]), json.loads(lines[3][1])]
v = [json.loads(lines[1][1]), json.loads(lines[2][1])]
for k in b[0]:
    mb, mv = (b[0][k] + b[1][k]) / 2, (v[0][k] + v[1][k]) / 2
    print(f"  {k:>12}  B {mb:8.3f}  {lines[1][0]} {mv:8.3f}  B/V {mb / mv:.3f}")
PY
done
