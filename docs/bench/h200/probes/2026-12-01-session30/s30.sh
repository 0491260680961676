#!/bin/bash
# Session 30: build the working tree; the small-batch GPU tests with the column clusters forced
# (MILES_EXT_KERNELS_COLUMN_CLUSTERS=1) and at the default (or the whole suite: SUITE=1; none:
# TESTS=0); then session 28's window_sweep.py over SHAPES (SWEEP=1): the working tree (its
# windows and rules), and a copy with the small-batch windows widened (B) with the column clusters
# off and forced on (ONLY_B=1: B alone, no tests; WIDE_AB=1, with wide_batch.patch applied: also
# B at its default rules with the wide batch off and on). Run from the repository root on the GPU
# machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
SWEEP_PY=docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
REPO=$(pwd)
S="16:256,64:256,64:512,64:1024,64:1536,64:2048,64:4096,64:5120,64:6144,64:8192,16:2048"
S="$S,256:256,512:256,768:256,1024:256,1536:256,2048:256,3072:256,256:512,512:512,768:512"
S="$S,1024:512,256:1024,512:1024,768:1024,256:2048,512:2048,256:4096,512:4096,192:6144"
export SHAPES="${SHAPES:-$S,256:8192}"
WIDE="${WIDE:-((256, 3072), (512, 1024), (4096, 768), (6144, 256), (8192, 384))}"
t0=$(date +%s)
build() {
  PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
    > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
}
[ -z "$ONLY_B" ] && build
echo "build $(( $(date +%s) - t0 )) s"
if [ "$TESTS" = 0 ] || [ -n "$ONLY_B" ]; then
  :
elif [ -n "$SUITE" ]; then
  PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider -p no:logging \
    --show-capture=no tests/gpu 2>&1 | tee $OUT/suite.log | tail -8
else
  MILES_EXT_KERNELS_COLUMN_CLUSTERS=1 PYTHONPATH=/tmp/site:. python3 -m pytest -q \
    -p no:cacheprovider -p no:logging --show-capture=no -x \
    tests/gpu/test_rmsnorm_kernel_guarantees.py -k "row_column" 2>&1 \
    | tee $OUT/forced_tests.log | tail -4
  PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider -p no:logging \
    --show-capture=no -x tests/gpu/test_rmsnorm_kernel_guarantees.py \
    -k "row_column or small or one_row" 2>&1 | tee $OUT/small_tests.log | tail -4
fi
echo "tests $(( $(date +%s) - t0 )) s"
[ -z "$SWEEP" ] && exit 0
rm -rf /tmp/B && cp -r . /tmp/B || exit 1
(cd /tmp/B && sed -i "s/^SMALL_WINDOWS = .*/SMALL_WINDOWS = $WIDE/" \
  miles_ext_kernels/kernels/rmsnorm/spec.py \
  && PYTHONPATH=/tmp/site:. python3 tools/gen_kernel_build_json.py > /dev/null \
  && grep "^SMALL_WINDOWS" miles_ext_kernels/kernels/rmsnorm/spec.py && build) || exit 1
echo "build B $(( $(date +%s) - t0 )) s"
sweep() {  # tree label [env]
  (cd $1 && env $3 PYTHONPATH=/tmp/site:. python3 $REPO/$SWEEP_PY 2>&1 | grep -v -i warn \
    > $OUT/window_$2.txt)
  echo "sweep $2 $(( $(date +%s) - t0 )) s"
}
if [ -z "$ONLY_B" ]; then sweep $REPO repo; else : > $OUT/window_repo.txt; fi
sweep /tmp/B B0 MILES_EXT_KERNELS_COLUMN_CLUSTERS=0
sweep /tmp/B B1 MILES_EXT_KERNELS_COLUMN_CLUSTERS=1
LAST=B1
if [ -n "$WIDE_AB" ]; then  # with wide_batch.patch: the default rules, the wide batch off / on
  sweep /tmp/B Bn MILES_EXT_KERNELS_WIDE_BATCH=0
  sweep /tmp/B Bw
  LAST="Bn Bw"
fi
paste $OUT/window_repo.txt $OUT/window_B0.txt $(for l in $LAST; do echo $OUT/window_$l.txt; done) \
  | sed -E 's/ +/ /g; s/backward_row_column_kernel/rc/g; s/backward_deterministic_kernel/main/g' \
  | cut -c1-240
