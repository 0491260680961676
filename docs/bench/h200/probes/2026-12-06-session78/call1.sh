#!/bin/bash
# Session 78, call 1: session 77's prepared call 10 (the FP32 weights multicast over clusters of C
# CTAs, multicast_weights.patch, MILES_EXT_KERNELS_PROBE_MULTICAST=C: bits of C = 8, 4 against
# the same build unset, then rows C = 0 8 4 4 8 0 and BF16 for reference) and, on an H200 only,
# session 77's call 9 (the harness's backward bandwidth lines on main at T 16384 and 65536, H 2048
# and 4096: the backward's 85% line at 16384 x 2048, unmeasured on an H200 since session 62).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
patched_tree MC $D77/multicast_weights.patch || exit 1
build_matching /tmp/MC MC 8 'miles_rmsnorm_fwd__h2048$' &
case "$GPU" in *H200*)
  build_matching . M 4 'miles_rmsnorm_bwd__h2048$' &
  build_matching . M2 4 'miles_rmsnorm_fwd__h2048$' & ;;
esac
wait
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,801x5120
(cd /tmp/MC && python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
 for c in 8 4; do
   MILES_EXT_KERNELS_PROBE_MULTICAST=$c python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -2 \
     | sed "s/^/C=$c /"
 done)
echo "bits $(( $(date +%s) - t0 )) s"
R=800x5120,1024x5120,1100x4096,4096x1536,4096x2048,4096x4096,1024x6144,1024x8192,16384x2048
for c in 0 8 4 4 8 0; do
  ROWS_OP=fwd rows_run rows1.txt C$c /tmp/MC plain fp32 $R MILES_EXT_KERNELS_PROBE_MULTICAST=$c
done
ROWS_OP=fwd rows_run rows1.txt C0 /tmp/MC plain bf16 $R
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows1.txt | tee $OUT/table.md
echo "rows $(( $(date +%s) - t0 )) s"
h200_lines bwd
