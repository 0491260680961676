#!/bin/bash
# Session 55 call 4: step 90's split test with its FP16 case's weights fixed (FP32: FP16 weights
# have no program, so call 3 skipped it), then two record runs of the forward at T 1, 16, 64 (ours
# only) on step 90, and the rows at 2.85 us or more.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k split_row_forward_runs 2>&1 \
  | tee $OUT/split_test.log | tail -3
for i in 1 2; do fwd_record record_$i ours; done
echo "t $(( $(date +%s) - t0 )) s"
slow_rows $OUT/record_?.md
