#!/bin/bash
# Session 76, call 3: S3 = the staged weights copied through L1 (cp.async.ca; staged_l1.patch), its
# forward program and main's built here and carried (.device/cache76); bits of S3 against main
# (M); M S3 S3 M of the FP32-weight forward at T 1024-65536; main's BF16 weights for reference.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
mkdir -p /tmp/mek-cache && cp -r .device/cache76/. /tmp/mek-cache/
patched_tree S3 $D76/staged_l1.patch || exit 1
build_matching . M 8 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/S3 S3 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,20000x4096
python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
(cd /tmp/S3 && python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -3)
echo "bits $(( $(date +%s) - t0 )) s"
R=1024x2048,4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,4096x5120,1024x6144,1024x8192
R=$R,4096x8192,16384x2048,16384x8192,65536x2048
abba rows3.txt fwd $R "plain fp32" -- ". M" "/tmp/S3 S3"
ab rows3.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows3.txt
