#!/bin/bash
# Session 28: build the working tree; the row-and-column and small-batch GPU tests (or the whole
# suite: SUITE=1; none: TESTS=0); the rows x hidden sweep of the cluster kernel against the row
# and column CTAs (SWEEP=1, rc_sweep.py; ROWS, HIDDEN); then the harness A/B in the same build
# (PASSES passes over HROWS, HHIDDEN, WEIGHTS, FAMILIES; A: MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD
# =${A:-0}, B: the launcher's choice, or =$B where B is set).
# Run from the repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session28
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
if [ "$TESTS" = 0 ]; then
  :
elif [ -n "$SUITE" ]; then
  python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
    | tee $OUT/suite.log | tail -8
else
  python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no -x \
    tests/gpu/test_rmsnorm_kernel_guarantees.py -k "row_column or small or reread or one_row" 2>&1 \
    | tee $OUT/small_tests.log | tail -8
fi
echo "tests $(( $(date +%s) - t0 )) s"
if [ -n "$SWEEP" ]; then
  python3 $P/rc_sweep.py 2>&1 | tee $OUT/rc_sweep.txt
  echo "sweep $(( $(date +%s) - t0 )) s"
fi
COMMON="--device cuda --only bwd --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget 100 --rows ${HROWS:-64}"
COMMON="$COMMON --hidden ${HHIDDEN:-256,512,1536,2048,4096,5120,6144,8192} --weights ${WEIGHTS:-bf16}"
COMMON="$COMMON --families ${FAMILIES:-plain,residual}"
for pass in ${PASSES:-}; do
  MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD=${A:-0} python3 -m benchmarks.rmsnorm $COMMON \
    --out $OUT/A$pass > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  if [ -n "$B" ]; then
    MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD=$B python3 -m benchmarks.rmsnorm $COMMON \
      --out $OUT/B$pass > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  else
    python3 -m benchmarks.rmsnorm $COMMON --out $OUT/B$pass > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  fi
  rm -f $OUT/A$pass/results.md $OUT/B$pass/results.md
  echo "pass $pass $(( $(date +%s) - t0 )) s"
  python3 docs/bench/h200/probes/2026-12-01-session26/abfull.py $OUT/A$pass/results.json \
    $OUT/B$pass/results.json
done
