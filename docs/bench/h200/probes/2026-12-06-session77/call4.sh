#!/bin/bash
# Session 77, call 4: neither the flush's evict_last lines (Z) nor an evict_last policy on the late
# weights (K) moved the FP32 penalty (call 3). Per-CTA timelines instead (cta_stamps.patch,
# cta_timeline.py): when do the CTAs past the first wave start, and how long do they take, with
# BF16 and with FP32 weights.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree T $D77/cta_stamps.patch || exit 1
build_matching /tmp/T T 16 'miles_rmsnorm_fwd__h2048$' || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/T && timeout -s KILL 200 python3 $D77/cta_timeline.py \
  792x5120,800x5120,1024x5120,1056x4096,1100x4096,2112x2048,2200x2048,4096x2048 9 2>&1 \
  | grep -v -i warn | tee $OUT/timeline4.md)
echo "timeline $(( $(date +%s) - t0 )) s"
