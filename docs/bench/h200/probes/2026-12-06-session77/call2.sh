#!/bin/bash
# Session 77, call 2: call 1 found the whole FP32-weight penalty in the late weight loads (N, no
# loads: the BF16 times) and most of it in a grid's last partial wave (800 x 5120: 8 CTAs past one
# full wave, FP32 8.01 against BF16 6.04 us). P1 = the late weights prefetched into L1 at the
# kernel's entry (prefetch_l1.patch: prefetch.global.L1, no register held), P2 = prefetched into
# L2 with evict_last (prefetch_l2.patch). M P1 P2 P2 P1 M, FP32 weights; then, on an H200 only,
# the harness's bandwidth lines (ours, plain BF16, T 16384 and 65536 at H 2048 and 4096).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
patched_tree P1 $D77/prefetch_l1.patch || exit 1
patched_tree P2 $D77/prefetch_l2.patch || exit 1
MODS='miles_rmsnorm_fwd__h2048$'
case "$GPU" in *H200*) MODS='miles_rmsnorm_(fwd|bwd)__h2048$';; esac
build_matching . M 6 "$MODS" &
build_matching /tmp/P1 P1 5 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/P2 P2 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=800x5120,1024x5120,1100x4096,2200x2048,4096x2048,4096x1536,4096x4096,1024x6144,1024x8192
R=$R,16384x2048,16384x256,65536x8192
ab rows2.txt fwd $R "plain fp32" -- ". M" "/tmp/P1 P1" "/tmp/P2 P2"
ab rows2.txt fwd $R "plain fp32" -- "/tmp/P2 P2" "/tmp/P1 P1" ". M"
ab rows2.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows2.txt
case "$GPU" in *H200*)
  timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only fwd,bwd \
    --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
    > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
  mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
  grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
  echo "harness $(( $(date +%s) - t0 )) s";;
esac
