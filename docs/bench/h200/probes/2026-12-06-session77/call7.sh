#!/bin/bash
# Session 77, call 7: the row loop (call 6) was slower with both weight types, though less so with
# FP32 weights. A direct test of the reading that the weight lines' few L2 slices are the queue:
# D = the late FP32 weights read from 64 places instead of one (spread_weights_diagnostic.patch:
# rows 2 (row % 64) and the next of x, wrong values, timing only), with N (call 1's no-loads
# diagnostic) beside it. M D N N D M, FP32 weights; BF16 for reference.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree D $D77/spread_weights_diagnostic.patch || exit 1
patched_tree N $D77/no_weight_loads.patch || exit 1
build_matching . M 6 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/D D 5 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/N N 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=800x5120,1024x5120,1100x4096,4096x1536,4096x2048,4096x4096,1024x6144,1024x8192,16384x2048
ab rows7.txt fwd $R "plain fp32" -- ". M" "/tmp/D D" "/tmp/N N"
ab rows7.txt fwd $R "plain fp32" -- "/tmp/N N" "/tmp/D D" ". M"
ab rows7.txt fwd $R "plain bf16" -- ". M"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows7.txt
echo "rows $(( $(date +%s) - t0 )) s"
