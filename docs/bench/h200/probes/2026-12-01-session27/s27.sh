#!/bin/bash
# Session 27: build the working tree, the small-batch GPU tests (or the whole suite: SUITE=1),
# then the re-read dw A/B in the same build over ROWS (PASSES passes; A:
# MILES_EXT_KERNELS_SMALL_DW=fold, the fold through the workspace; B: the launcher's choice), and
# CUPTI kernel durations (KT=1). TESTS=0: no tests; ROWS, HIDDEN, WEIGHTS, FAMILIES: the
# harness's sets. Calls 1-3 ran an earlier knob, MILES_EXT_KERNELS_SMALL_DW_FOLD=1, against the
# re-read everywhere (call 1 at every batch size, calls 2-3 at batches of one and two rows).
# Run from the repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
D=docs/bench/h200/probes/2026-12-01-session26
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
if [ "$TESTS" = 0 ]; then
  :
elif [ -n "$SUITE" ]; then
  python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
    | tee $OUT/suite.log | tail -6
else
  python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
    tests/gpu/test_rmsnorm_kernel_guarantees.py -k "small or reread or one_row or fold" 2>&1 \
    | tee $OUT/small_tests.log | tail -6
fi
echo "tests $(( $(date +%s) - t0 )) s"
COMMON="--device cuda --only bwd --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget 100 --rows ${ROWS:-64}"
COMMON="$COMMON --hidden ${HIDDEN:-256,512,1536,2048,4096,5120,6144,8192} --weights ${WEIGHTS:-bf16,fp32}"
COMMON="$COMMON --families ${FAMILIES:-plain,residual,per_head_contig}"
for pass in ${PASSES:-1}; do
  MILES_EXT_KERNELS_SMALL_DW=fold python3 -m benchmarks.rmsnorm $COMMON --out $OUT/A$pass \
    > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  python3 -m benchmarks.rmsnorm $COMMON --out $OUT/B$pass > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  rm -f $OUT/A$pass/results.md $OUT/B$pass/results.md
  echo "pass $pass $(( $(date +%s) - t0 )) s"
  python3 $D/abfull.py $OUT/A$pass/results.json $OUT/B$pass/results.json
done
if [ -n "$KT" ]; then
  for f in 1 0; do
    for mode in fold reread; do
      echo "== flush $f $mode"
      MILES_EXT_KERNELS_SMALL_DW=$mode FLUSH=$f OPS=bwd \
        python3 docs/bench/h200/probes/2026-12-01-session25/kernel_times.py \
        2>&1 | tee $OUT/kt_bwd_flush${f}_$mode.txt | grep -v "^$"
    done
  done
fi
