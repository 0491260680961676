#!/bin/bash
# Session 29, calls 3-4: where the row and column CTAs' time goes at tall narrow shapes. Session
# 28's window_sweep.py over SHAPES in copies of the working tree with the small-batch windows
# widened, one a tree of TREES: B (as is), rows (the column CTAs leave at once: no dw), cols (the
# row CTAs leave at once: no dx), c256 (call 4's working tree with the column loads' L2 block of
# 256 bytes instead of 128), A (the commit before's package, .device/pkgA; replaced after the
# widening, so it keeps its own windows). Probe-only patches, applied to copies. .whl and .device
# carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
P=docs/bench/h200/probes/2026-12-01-session29
SWEEP_PY=docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
REPO=$(pwd)
WIDE="${WIDE:-((256, 2048), (512, 1024), (4096, 768), (6144, 256), (8192, 384))}"
K=miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_row_column.cuh
t0=$(date +%s)
prep() {
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && cd /tmp/$1 || exit 1
  sed -i "s/^SMALL_WINDOWS = .*/SMALL_WINDOWS = $WIDE/" miles_ext_kernels/kernels/rmsnorm/spec.py
  case $1 in
    A) rm -rf miles_ext_kernels && cp -r .device/pkgA/miles_ext_kernels . ;;
    c256) sed -i 's/ld.global.nc.L2::128B/ld.global.nc.L2::256B/' ${K%/*}/device.cuh ;;
    rows) sed -i 's|^  const int first_vector = (cta - rc.row_ctas) \* rc.vectors;|  return;\n&|' $K ;;
    cols) sed -i 's|^    row_cta_dx<XT, WT, RESIDUAL>(p, s, row, row < p.rows, group, j, partials);|    (void)row;|' $K ;;
  esac
  grep -c "return;\|(void)row;\|L2::256B" $K ${K%/*}/device.cuh
  PYTHONPATH=/tmp/site:. python3 tools/gen_kernel_build_json.py > /dev/null || exit 1
  PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
    --module miles_rmsnorm_bwd_small > /tmp/build_$1.log 2>&1 || { tail -30 /tmp/build_$1.log; exit 1; }
  cd $REPO
}
TREES=${TREES:-B rows cols A}
for tree in $TREES; do prep $tree; echo "build $tree $(( $(date +%s) - t0 )) s"; done
for tree in $TREES; do
  (cd /tmp/$tree && PYTHONPATH=/tmp/site:. python3 $REPO/$SWEEP_PY 2>&1 | grep -v -i warn \
    > $OUT/variant_$tree.txt)
done
paste $(for t in $TREES; do echo $OUT/variant_$t.txt; done) | sed -E 's/ +/ /g; s/backward_[a-z_]+kernel//g'
