#!/bin/bash
# Session 42, call 1: the column clusters' pushed task sums and staged rows. Builds the working
# tree (new), HEAD's package (.device/old: A) and the working tree without the staged rows (C:
# push only, by sed), times window_sweep.py (session 28) over the column clusters' shapes in each,
# then runs the small-batch GPU tests on the working tree. Run from the repository root, .whl and
# .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree old || exit 1
rm -rf /tmp/C && cp -r . /tmp/C || exit 1
sed -i 's/column_cluster_dw<XT, B, \(true\|false\), kWide>/column_cluster_dw<XT, B, \1, false>/' \
  /tmp/C/$PKG/include/miles_rmsnorm/backward_row_column.cuh
grep -c "B, true, false>\|B, false, false>" /tmp/C/$PKG/include/miles_rmsnorm/backward_row_column.cuh
(cd /tmp/C && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_all 14 /tmp/old:A /tmp/C:C
sweep /tmp/old A; sweep . new; sweep /tmp/C C; sweep /tmp/old A2; sweep . new2
timeout -s KILL 300 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "row_column or small or one_row or column" 2>&1 \
  | tee $OUT/small_tests.log | tail -4
echo "tests $(( $(date +%s) - t0 )) s"
table A new C A2 new2
