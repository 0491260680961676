#!/bin/bash
# Session 30 probe: the widened-window tree (B) with the column clusters forced on, and three
# probe builds of it (variants.py: rows_only, columns_only, no_fold), window_sweep.py over SHAPES.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session30
SWEEP_PY=docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
REPO=$(pwd)
export SHAPES="${SHAPES:-64:256,64:2048,64:8192,256:256,1536:256,1024:512,768:1024,512:4096}"
WIDE="${WIDE:-((256, 3072), (512, 1024), (4096, 768), (6144, 256), (8192, 384))}"
export MILES_EXT_KERNELS_COLUMN_CLUSTERS=1
t0=$(date +%s)
for v in full ${VARIANTS:-rows_only columns_only no_fold}; do
  rm -rf /tmp/V && cp -r . /tmp/V || exit 1
  (cd /tmp/V && sed -i "s/^SMALL_WINDOWS = .*/SMALL_WINDOWS = $WIDE/" \
    miles_ext_kernels/kernels/rmsnorm/spec.py && { [ $v = full ] || python3 $REPO/$P/variants.py . $v; } \
    && PYTHONPATH=/tmp/site:. python3 tools/gen_kernel_build_json.py > /dev/null \
    && PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
    > /tmp/build.log 2>&1) || { tail -20 /tmp/build.log; exit 1; }
  (cd /tmp/V && PYTHONPATH=/tmp/site:. python3 $REPO/$SWEEP_PY 2>&1 | grep -v -i warn \
    > $OUT/probe_$v.txt)
  echo "$v $(( $(date +%s) - t0 )) s"
done
paste $OUT/probe_full.txt $OUT/probe_*_only.txt $OUT/probe_no_fold.txt | sed -E 's/ +/ /g' \
  | sed -E 's/backward_row_column_kernel/rc/g' | cut -c1-220
