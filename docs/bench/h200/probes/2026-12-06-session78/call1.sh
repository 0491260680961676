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
  (cd /tmp/MC && MILES_EXT_KERNELS_PROBE_MULTICAST=$c timeout -s KILL 120 python3 $ROWS_PY fwd \
    plain fp32 $R 2>/dev/null | sed "s/^/C$c plain fp32 /") >> $OUT/rows1.txt
done
(cd /tmp/MC && timeout -s KILL 120 python3 $ROWS_PY fwd plain bf16 $R 2>/dev/null \
  | sed "s/^/C0 plain bf16 /") >> $OUT/rows1.txt
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows1.txt | tee $OUT/table.md
echo "rows $(( $(date +%s) - t0 )) s"
case "$GPU" in *H200*)
  timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
    --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
    > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
  mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
  grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
  echo "harness $(( $(date +%s) - t0 )) s" ;;
esac
