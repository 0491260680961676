#!/bin/bash
# Session 76, call 1: S = main with FP32 weights staged in shared memory by cp.async at the
# loop-free forward's entry (staged_weights.patch; a probe: every LATE_WEIGHTS instance of
# forward_rows_kernel), against main (M): y / rstd / h_new bits, then M S S M of the FP32-weight
# forward at T 1024-65536, the residual form M S, and main's BF16-weight times for reference.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
patched_tree S $D76/staged_weights.patch || exit 1
build_matching . M 8 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/S S 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,20000x4096
python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
(cd /tmp/S && python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -3)
echo "bits $(( $(date +%s) - t0 )) s"
R=1024x2048,4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,4096x5120,1024x6144,1024x8192
R=$R,4096x8192,16384x2048,16384x8192,65536x2048
abba rows1.txt fwd $R "plain fp32" -- ". M" "/tmp/S S"
ab rows1.txt fwd 1024x4096,4096x2048,4096x8192 "residual fp32" -- ". M" "/tmp/S S"
ab rows1.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows1.txt
