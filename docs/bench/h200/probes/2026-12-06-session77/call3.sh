#!/bin/bash
# Session 77, call 3: the prefetches of call 2 were slower everywhere. Reading of calls 1-2: the
# harness's flush leaves L2 full of evict_last lines, the late FP32 weight loads of a grid's last
# partial wave miss L2 (the rows streamed past), and their round trip is the penalty. K = the late
# FP32 weight loads with load_raw_keep's L2 evict_last policy (late_weights_keep.patch); M K K M,
# FP32 weights. Z = main timed with the flush's plain zero_ only (rows_plain_flush.py; FP32 and
# BF16): the mechanism. Then, on an H200 only, the harness's bandwidth lines (ours, plain BF16).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
patched_tree K $D77/late_weights_keep.patch || exit 1
MODS='miles_rmsnorm_fwd__h2048$'
case "$GPU" in *H200*) MODS='miles_rmsnorm_(fwd|bwd)__h2048$';; esac
build_matching . M 8 "$MODS" &
build_matching /tmp/K K 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=792x5120,800x5120,1024x5120,1056x4096,1100x4096,2200x2048,4096x2048,4096x1536,4096x4096
R=$R,1024x6144,1024x8192,16384x2048,16384x256,65536x8192
abba rows3.txt fwd $R "plain fp32" -- ". M" "/tmp/K K"
ab rows3.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
for wt in fp32 bf16; do
  timeout -s KILL 120 python3 $D77/rows_plain_flush.py fwd plain $wt $R 2>/dev/null \
    | sed "s/^/Z plain $wt /" >> $OUT/rows3.txt
done
echo "plain flush $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows3.txt
case "$GPU" in *H200*)
  timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only fwd,bwd \
    --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
    > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
  mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
  grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
  echo "harness $(( $(date +%s) - t0 )) s";;
esac
