#!/bin/bash
# Session 32: the harness over package variants in one call. B: the working tree; each name in
# VARIANTS: a copy of the package at .device/<name>/miles_ext_kernels/kernels/rmsnorm (its own
# build.json). Each set runs B, the variants, then the same in reverse (the order's bias cancels)
# and vab.py prints each variant against B. Run from the repository root on the GPU machine, .whl
# and .device carried.
#   SETS: space-separated "rows:hidden:families:weights"; ONLY: the harness's op (default fwd)
#   MODULES: the modules a variant needs built (default: the forward's); SUITE=1: GPU suite on B
#   TIME_BUDGET: the harness's seconds a run (default 100; cases past it are skipped)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
D=docs/bench/h200/probes/2026-12-02-session32
use() { [ "$1" = B ] || { mv $PKG /tmp/pkgB && cp -r .device/$1/$PKG $PKG; }; }
back() { [ "$1" = B ] || { rm -rf $PKG && mv /tmp/pkgB $PKG; }; }
build() { python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 "$@" > /tmp/build.log 2>&1 \
  || { tail -30 /tmp/build.log; return 1; }; }
t0=$(date +%s)
build || exit 1
echo "build B $(( $(date +%s) - t0 )) s"
if [ -n "$SUITE" ]; then
  python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
    | tee $OUT/suite.log | tail -3
  echo "suite $(( $(date +%s) - t0 )) s"
fi
mods=""
for m in ${MODULES:-miles_rmsnorm_fwd}; do mods="$mods --module $m"; done
for v in $VARIANTS; do use $v; build $mods; ok=$?; back $v; [ $ok = 0 ] || exit 1; done
echo "builds $(( $(date +%s) - t0 )) s"
COMMON="--device cuda --only ${ONLY:-fwd} --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget ${TIME_BUDGET:-100}"
order="B $VARIANTS $(echo B $VARIANTS | tr ' ' '\n' | tac | tr '\n' ' ')"
i=0
for set in $SETS; do
  i=$((i + 1))
  IFS=: read -r rows hidden families weights <<< "$set"
  declare -A pass=()
  for v in $order; do
    pass[$v]=$(( ${pass[$v]:-0} + 1 ))
    use $v
    python3 -m benchmarks.rmsnorm $COMMON --weights $weights --families $families --rows "$rows" \
      --hidden "$hidden" --out $OUT/s$i$v${pass[$v]} > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    back $v
    rm -f $OUT/s$i$v${pass[$v]}/results.md
  done
  unset pass
  echo "set $i ($set) $(( $(date +%s) - t0 )) s"
  for v in $VARIANTS; do
    echo "-- A = $v, B = working tree"
    python3 $D/ab.py $OUT/s$i${v}1 $OUT/s$i${v}2 $OUT/s${i}B1 $OUT/s${i}B2
  done
done
exit 0
