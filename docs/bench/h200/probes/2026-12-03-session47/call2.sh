#!/bin/bash
# Session 47, call 2: the half-warp forward at every form past the spread window (W: working
# tree) and with CTAs of 128 threads from 16384 rows (C: .device/C47) against HEAD 74e13f4 (A:
# .device/A47); rows.py A W C C W A (A W W A for the residual form); then the forward's bit tests.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A47 || exit 1
copy_tree C47 || exit 1
fwd_build /tmp/A47 A 6 & fwd_build /tmp/C47 C 5 & fwd_build . W 5 & wait
echo "builds $(( $(date +%s) - t0 )) s"
ab rows.txt fwd "4096x256,8192x256,16384x256,65536x256,16384x200" "plain bf16" -- \
  "/tmp/A47 A" ". W" "/tmp/C47 C" "/tmp/C47 C" ". W" "/tmp/A47 A"
ab rows.txt fwd "4096x256,8192x256,16384x256,65536x256" "plain fp32" -- \
  "/tmp/A47 A" ". W" "/tmp/C47 C" "/tmp/C47 C" ". W" "/tmp/A47 A"
ab rows.txt fwd "1024x256,4096x256" "phs bf16" -- \
  "/tmp/A47 A" ". W" "/tmp/C47 C" "/tmp/C47 C" ". W" "/tmp/A47 A"
ab rows.txt fwd "4096x256,16384x256,65536x256,16384x200" "residual bf16" -- \
  "/tmp/A47 A" ". W" ". W" "/tmp/A47 A"
ab rows.txt fwd "4096x256,16384x256,65536x256" "residual fp32" -- \
  "/tmp/A47 A" ". W" ". W" "/tmp/A47 A"
echo "rows $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "loop_free or fp32_weight_forward or per_head or batch_invariance or million or edge or written" \
  2>&1 | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
