#!/bin/bash
# Session 47, call 4: FP32 weights in the half-warp forward loaded with the row (E: .device/E47)
# against the landed rule's late load (W: working tree) and HEAD 74e13f4 (A: .device/A47);
# rows.py A W E E W A; then the half-warp tests of the working tree (call 3's zip fixed).
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A47 || exit 1
copy_tree E47 || exit 1
fwd_build /tmp/A47 A 6 & fwd_build /tmp/E47 E 5 & fwd_build . W 5 & wait
echo "builds $(( $(date +%s) - t0 )) s"
ab rows.txt fwd "4096x256,8192x256,16384x256,65536x256,16384x200" "plain fp32" -- \
  "/tmp/A47 A" ". W" "/tmp/E47 E" "/tmp/E47 E" ". W" "/tmp/A47 A"
ab rows.txt fwd "1024x256" "phs fp32" -- \
  "/tmp/A47 A" ". W" "/tmp/E47 E" "/tmp/E47 E" ". W" "/tmp/A47 A"
echo "rows $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "half_warp" 2>&1 | tail -2
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
