#!/bin/bash
# Session 77, call 8: call 7's D (the weights read from 64 places) took half the FP32 penalty off:
# the weight lines' requests are part of the queue, and L1 filters them. Two ways to let L1 keep
# the weights (same bits): A1 = the loop-free kernels' row loads without allocating in L1
# (rows_no_l1_allocate.patch, every weight type); A2 = A1 and the late FP32 weights loaded with an
# L1 evict_last priority (rows_no_l1_allocate_weights_l1_last.patch). M A1 A2 A2 A1 M, FP32 and
# BF16 weights.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree A1 $D77/rows_no_l1_allocate.patch || exit 1
patched_tree A2 $D77/rows_no_l1_allocate_weights_l1_last.patch || exit 1
build_matching . M 6 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/A1 A1 5 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/A2 A2 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=800x5120,1024x5120,1100x4096,4096x1536,4096x2048,4096x4096,1024x6144,1024x8192,16384x2048
R=$R,65536x4096,16384x256
ab rows8.txt fwd $R "plain fp32" "plain bf16" -- ". M" "/tmp/A1 A1" "/tmp/A2 A2"
ab rows8.txt fwd $R "plain fp32" "plain bf16" -- "/tmp/A2 A2" "/tmp/A1 A1" ". M"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows8.txt
echo "rows $(( $(date +%s) - t0 )) s"
