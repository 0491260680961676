#!/bin/bash
# Session 32: A/B of two builds of the first-party package. B: the working tree; A: .device/pkgA,
# a `git archive` of the commit before (`git archive HEAD miles_ext_kernels | tar -x -C
# .device/pkgA`). Each set runs B A A B (the order's bias cancels) and ab.py prints the rows.
# Run from the repository root on the GPU machine, .whl carried.
#   SETS: space-separated "rows:hidden:families:weights" (the harness's grid)
#   ONLY: the harness's op (fwd, default, or bwd); SUITE=1: the GPU suite on B first
#   MODULES: the modules A needs built (default: the forward's)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
D=docs/bench/h200/probes/2026-12-02-session32
side_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
side_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
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
side_a; build $mods; ok=$?; side_b; [ $ok = 0 ] || exit 1
echo "build A $(( $(date +%s) - t0 )) s"
COMMON="--device cuda --only ${ONLY:-fwd} --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget 100"
i=0
for set in $SETS; do
  i=$((i + 1))
  IFS=: read -r rows hidden families weights <<< "$set"
  cmd="python3 -m benchmarks.rmsnorm $COMMON --weights $weights --families $families"
  for run in B1 A1 A2 B2; do
    side=${run:0:1}
    [ $side = A ] && side_a
    $cmd --rows "$rows" --hidden "$hidden" --out $OUT/s$i$run > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    [ $side = A ] && side_b
    rm -f $OUT/s$i$run/results.md
  done
  echo "set $i ($set) $(( $(date +%s) - t0 )) s"
  python3 $D/ab.py $OUT/s${i}A1 $OUT/s${i}A2 $OUT/s${i}B1 $OUT/s${i}B2
done
exit 0
