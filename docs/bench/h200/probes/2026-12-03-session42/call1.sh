#!/bin/bash
# Session 42, call 1: the column clusters' pushed task sums and staged rows. Builds the working
# tree (new), HEAD's package (.device/old: A) and the working tree without the staged rows (C:
# push only, by sed), times window_sweep.py (session 28) over the column clusters' shapes in each,
# then runs the small-batch GPU tests on the working tree. Run from the repository root, .whl and
# .device carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 \
  PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
SWEEP_PY=$(pwd)/docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
t0=$(date +%s)
rm -rf /tmp/A /tmp/C && cp -r . /tmp/A && cp -r . /tmp/C || exit 1
rm -rf /tmp/A/$PKG && cp -r .device/old/$PKG /tmp/A/$PKG
sed -i 's/column_cluster_dw<XT, B, \(true\|false\), kWide>/column_cluster_dw<XT, B, \1, false>/' \
  /tmp/C/$PKG/include/miles_rmsnorm/backward_row_column.cuh
grep -c "B, true, false>\|B, false, false>" /tmp/C/$PKG/include/miles_rmsnorm/backward_row_column.cuh
(cd /tmp/C && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
small() { (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
  --jobs 4 --module miles_rmsnorm_bwd_small__h256 > /tmp/build_$2.log 2>&1 \
  || { tail -20 /tmp/build_$2.log; exit 1; }) }
small /tmp/A A & PA=$!
small /tmp/C C & PC=$!
timeout -s KILL 420 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 14 \
  > /tmp/build_new.log 2>&1 || { tail -30 /tmp/build_new.log; exit 1; }
wait $PA || exit 1; wait $PC || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
S="64:256,256:256,512:256,640:256,1024:256,1536:256,2048:256,768:512,1024:512,1536:512"
export SHAPES="$S,512:1024,768:1024,1024:1024"
sweep() { (cd $1 && timeout -s KILL 150 python3 $SWEEP_PY 2>&1 | grep -v -i warn > $OUT/sweep_$2.txt)
  echo "sweep $2 $(( $(date +%s) - t0 )) s"; }
sweep /tmp/A A; sweep . new; sweep /tmp/C C; sweep /tmp/A A2; sweep . new2
timeout -s KILL 300 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "row_column or small or one_row or column" 2>&1 \
  | tee $OUT/small_tests.log | tail -4
echo "tests $(( $(date +%s) - t0 )) s"
python3 - $OUT <<'PY'
import re, sys
out = sys.argv[1]
runs = ["A", "new", "C", "A2", "new2"]
rows = {}
for r in runs:
    for line in open(f"{out}/sweep_{r}.txt"):
        m = re.match(r"\s*(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+\S+$", line)
        if m:
            rows.setdefault(m.group(1), {})[r] = (m.group(2), m.group(3))
print("cold / warm us:", " | ".join(runs))
for shape, v in rows.items():
    print(f"{shape:>20s} " + " | ".join("/".join(v.get(r, ("-", "-"))) for r in runs))
PY
