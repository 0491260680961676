#!/bin/bash
# Session 77, call 5: call 4's timelines: with FP32 weights every first-wave CTA ends together
# (792 x 5120: the earliest tenth at 4.6 us, against 2.5 with BF16 weights), so the next wave starts
# late. Reading: a late weight request waits behind the rows' requests already queued. Session 76's
# S3 (staged_l1.patch: the weights copied to shared memory by cp.async at the kernel's entry) should
# then end its CTAs as BF16 does; it measured level. Its timeline (TS: staged_l1_stamps.patch)
# beside main's (T), and M S3 S3 M once more.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree T $D77/cta_stamps.patch || exit 1
patched_tree TS $D77/staged_l1_stamps.patch || exit 1
patched_tree S3 $D76/staged_l1.patch || exit 1
for v in T TS S3; do build_matching /tmp/$v $v 5 'miles_rmsnorm_fwd__h2048$' & done
build_matching . M 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
for v in T TS; do
  (cd /tmp/$v && OUT=/tmp/$v timeout -s KILL 150 python3 $D77/cta_timeline.py \
    792x5120,1024x5120,1100x4096,4096x2048 7 2>&1 | grep -v -i warn | sed "s/^/$v /" \
    | tee -a $OUT/timeline5.md; cp /tmp/$v/stamps.pt $OUT/stamps_$v.pt)
done
echo "timeline $(( $(date +%s) - t0 )) s"
R=792x5120,1024x5120,1100x4096,1024x4096,4096x2048,4096x1536,1024x8192,16384x2048
abba rows5.txt fwd $R "plain fp32" -- ". M" "/tmp/S3 S3"
ab rows5.txt fwd $R "plain bf16" -- ". M"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows5.txt
echo "rows $(( $(date +%s) - t0 )) s"
