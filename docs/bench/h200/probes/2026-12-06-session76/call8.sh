#!/bin/bash
# Session 76, call 8 (calls 6-7 found no machine): W = the late FP32 weights of the loop-free
# kernel read coalesced (coalesced_weights.patch: two 512-byte halves a warp, four shuffles a
# vector); its y / rstd / h_new bits against main (M), M W W M of the FP32-weight forward with
# main's BF16 weights beside them; then, on an H200 only, the bandwidth lines in the harness (ours,
# plain BF16, T 16384 and 65536 at H 2048 and 4096: the backward's 85% line at 16384 x 2048,
# unmeasured on an H200 since session 62).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
patched_tree W $D76/coalesced_weights.patch || exit 1
MODS='miles_rmsnorm_fwd__h2048$'
case "$GPU" in *H200*) MODS='miles_rmsnorm_(fwd|bwd)__h2048$';; esac
build_matching . M 8 "$MODS" &
build_matching /tmp/W W 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,2000x1000,4100x2056,20000x4096
python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
(cd /tmp/W && python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -3)
echo "bits $(( $(date +%s) - t0 )) s"
R=4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,1024x6144,1024x8192,16384x2048
abba rows8.txt fwd $R "plain fp32" -- ". M" "/tmp/W W"
ab rows8.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows8.txt
case "$GPU" in *H200*)
  timeout -s KILL 120 python3 -m benchmarks.rmsnorm --device cuda --only fwd,bwd \
    --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
    > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
  mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
  grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
  echo "harness $(( $(date +%s) - t0 )) s";;
esac
(cd /tmp/W && timeout -s KILL 100 python3 -m pytest -q -p no:cacheprovider -p no:logging \
  --show-capture=no tests/gpu -k "forward and not backward" 2>&1 | tee $OUT/gpu_forward_W.log | tail -2)
echo "tests $(( $(date +%s) - t0 )) s"
