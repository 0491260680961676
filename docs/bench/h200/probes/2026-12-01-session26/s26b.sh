#!/bin/bash
# Session 26, calls 2-4: build the working tree, the GPU suite, then the one-row backward A/B in
# the same build (A: MILES_EXT_KERNELS_ONE_ROW_BACKWARD=0, the cluster kernel; B: the one-CTA
# kernel) over T = 1 (PASSES passes), capture_cost.py (CAPTURE_COST=1), CUPTI durations (KT=1;
# the calls ran a copy of kernel_times.py with the ONE_ROW cases built in, folded back into
# session 25's file afterwards). Run from the repository root on the GPU machine, .whl carried.
# Call 2: CAPTURE_COST=1; calls 3 and 4: PASSES="1 2" KT=1.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
D=docs/bench/h200/probes/2026-12-01-session26
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
if [ -z "$NO_SUITE" ]; then
  python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -4
  echo "suite $(( $(date +%s) - t0 )) s"
fi
COMMON="--device cuda --only bwd --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget 100 --rows ${ROWS:-1}"
COMMON="$COMMON --hidden ${HIDDEN:-256,512,1536,2048,4096,5120,6144,8192} --weights bf16,fp32"
COMMON="$COMMON --families ${FAMILIES:-plain,residual,per_head_contig}"
for pass in ${PASSES:-1}; do
  MILES_EXT_KERNELS_ONE_ROW_BACKWARD=0 python3 -m benchmarks.rmsnorm $COMMON --out $OUT/A$pass \
    > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  python3 -m benchmarks.rmsnorm $COMMON --out $OUT/B$pass > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  rm -f $OUT/A$pass/results.md $OUT/B$pass/results.md
  echo "pass $pass $(( $(date +%s) - t0 )) s"
  python3 $D/abfull.py $OUT/A$pass/results.json $OUT/B$pass/results.json
done
[ -n "$CAPTURE_COST" ] && python3 $D/capture_cost.py
# KT=1: CUPTI kernel durations of the backward cases (kernel_times.py), cold and warm
if [ -n "$KT" ]; then
  for f in 1 0; do
    FLUSH=$f OPS=bwd ONE_ROW=1 python3 docs/bench/h200/probes/2026-12-01-session25/kernel_times.py \
      2>&1 | tee $OUT/kt_bwd_flush$f.txt | grep -v "^$"
  done
fi
