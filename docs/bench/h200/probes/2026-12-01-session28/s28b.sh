#!/bin/bash
# Session 28, call 6: window_sweep.py from the repository (A) and from a copy with the small-batch
# windows widened (B: SMALL_WINDOWS below), both built into one cache. .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session28
REPO=$(pwd)
t0=$(date +%s)
PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build A $(( $(date +%s) - t0 )) s"
rm -rf /tmp/B && cp -r . /tmp/B && cd /tmp/B || exit 1
sed -i 's/^SMALL_WINDOWS = .*/SMALL_WINDOWS = ((256, 4096), (512, 2048), (4096, 1024), (6144, 512), (8192, 512))/' \
  miles_ext_kernels/kernels/rmsnorm/spec.py
grep "^SMALL_WINDOWS" miles_ext_kernels/kernels/rmsnorm/spec.py
PYTHONPATH=/tmp/site:. python3 tools/gen_kernel_build_json.py || exit 1
PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  > /tmp/buildB.log 2>&1 || { tail -30 /tmp/buildB.log; exit 1; }
echo "build B $(( $(date +%s) - t0 )) s"
cd $REPO
PYTHONPATH=/tmp/site:. python3 $P/window_sweep.py 2>&1 | grep -v -i warn | tee $OUT/window_A.txt
echo "A $(( $(date +%s) - t0 )) s"
(cd /tmp/B && PYTHONPATH=/tmp/site:. python3 $P/window_sweep.py 2>&1 | grep -v -i warn \
  | tee $OUT/window_B.txt)
echo "B $(( $(date +%s) - t0 )) s"
