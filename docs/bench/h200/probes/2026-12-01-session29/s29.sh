#!/bin/bash
# Session 29: build the working tree; the small-batch GPU tests (or the whole suite: SUITE=1;
# none: TESTS=0); then session 28's window_sweep.py over SHAPES (SWEEP=1) from three trees in one
# cache: the working tree (its windows), a copy with the small-batch windows widened (B), and the
# same copy with the commit before's package (A: .device/pkgA, from
# `git archive HEAD miles_ext_kernels`). Run from the repository root on the GPU machine, .whl and
# .device carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session29
SWEEP_PY=docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
REPO=$(pwd)
# Calls 1-2's shapes (the per-head views are always added).
S="512:256,768:256,1024:256,1536:256,2048:256,512:512,768:512,1024:512,512:1024,768:1024"
S="$S,256:2048,512:2048,768:2048,64:4096,256:4096,384:4096,512:4096,768:4096,192:5120,256:5120"
export SHAPES="${SHAPES:-256:256,$S,64:6144,192:6144,256:6144,64:8192,256:8192,384:8192}"
WIDE="${WIDE:-((256, 2048), (512, 1024), (4096, 768), (6144, 256), (8192, 384))}"
t0=$(date +%s)
build() {
  PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
    > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
}
build
echo "build $(( $(date +%s) - t0 )) s"
if [ "$TESTS" = 0 ]; then
  :
elif [ -n "$SUITE" ]; then
  PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider -p no:logging \
    --show-capture=no tests/gpu 2>&1 | tee $OUT/suite.log | tail -8
else
  PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider -p no:logging \
    --show-capture=no -x tests/gpu/test_rmsnorm_kernel_guarantees.py \
    -k "row_column or small or one_row" 2>&1 | tee $OUT/small_tests.log | tail -8
fi
echo "tests $(( $(date +%s) - t0 )) s"
[ -z "$SWEEP" ] && exit 0
widen() {
  sed -i "s/^SMALL_WINDOWS = .*/SMALL_WINDOWS = $WIDE/" miles_ext_kernels/kernels/rmsnorm/spec.py
  PYTHONPATH=/tmp/site:. python3 tools/gen_kernel_build_json.py > /dev/null || exit 1
  grep "^SMALL_WINDOWS" miles_ext_kernels/kernels/rmsnorm/spec.py
}
rm -rf /tmp/B /tmp/A && cp -r . /tmp/B && cp -r . /tmp/A || exit 1
(cd /tmp/B && widen && build) || exit 1
(cd /tmp/A && rm -rf miles_ext_kernels && cp -r .device/pkgA/miles_ext_kernels . && widen \
  && build) || exit 1
echo "builds A B $(( $(date +%s) - t0 )) s"
for tree in repo B A; do
  dir=$REPO; [ $tree != repo ] && dir=/tmp/$tree
  (cd $dir && PYTHONPATH=/tmp/site:. python3 $REPO/$SWEEP_PY 2>&1 | grep -v -i warn \
    > $OUT/window_$tree.txt)
  echo "sweep $tree $(( $(date +%s) - t0 )) s"
done
paste $OUT/window_repo.txt $OUT/window_B.txt $OUT/window_A.txt | awk -F'  +' '{print}' \
  | sed -E 's/ +/ /g' | cut -c1-200
