#!/bin/bash
# Session 77, call 6: call 5's S3 timeline ends its first-wave CTAs as late as main's, with the
# weights requested at entry: not the late request. Reading now: every CTA reads the same weight
# lines, so a few L2 slices serve them to every SM and the rows' requests queued there wait (N, no
# weight loads, had the BF16 times; FP32 weights double those bytes). Fewer weight reads: the row
# loop (forward_kernel: its weights loaded once a CTA, rows_per_cta rows each) at H 1536-8192
# past the spread window (R: row_loop_routes.patch, spec.FORWARD_ROWS_HIDDEN = (128, 1024), a
# launch choice, same bits). M R R M, FP32 and BF16 weights.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree R $D77/row_loop_routes.patch || exit 1
build_matching . M 8 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/R R 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=1024x1536,4096x1536,1024x2048,4096x2048,1024x4096,4096x4096,1024x5120,4096x5120,1024x6144
R=$R,4096x6144,1024x8192,4096x8192,16384x2048,16384x5120
abba rows6.txt fwd $R "plain fp32" "plain bf16" -- ". M" "/tmp/R R"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows6.txt
echo "rows $(( $(date +%s) - t0 )) s"
