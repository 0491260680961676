#!/bin/bash
# Session 46, call 6: the fixed forward kernel with y's operands widened once, before the row
# sum's barrier (W: the working tree) against step 81 as committed (N: HEAD 0eae404, .device/N46).
# Every module of W built, the GPU suite on W, session 41's rows.py N W W N N W at T 1, 16, 64,
# then three record runs of W's forward at T 1, 16, 64 (ours only).
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree N46 || exit 1
fwd_build /tmp/N46 N 4 &
build_tree 12
wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
S="1x2048,16x2048,64x2048,1x4096,16x4096,64x4096,1x6144,16x6144,64x6144,1x8192,16x8192,64x8192"
ab rows.txt fwd $S "residual bf16" "plain bf16" "plain fp32" -- \
  "/tmp/N46 N" ". W" ". W" "/tmp/N46 N" "/tmp/N46 N" ". W"
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
for i in 1 2 3; do fwd_record record_$i ours; done
echo "records $(( $(date +%s) - t0 )) s"
slow_rows $OUT/record_?.md
grep "residual bf16 | 16x6144\|residual bf16 | 64x6144" $OUT/table.txt
python3 docs/bench/h200/probes/2026-12-03-session46/geomeans.py $OUT/table.txt
