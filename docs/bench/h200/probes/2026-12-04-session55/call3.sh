#!/bin/bash
# Session 55 call 3: step 90 (BF16 rows that the fixed kernel takes stay one CTA a row below
# H 12288 instead of taking the split). A: HEAD's launcher and forward_policy.h (.device/a), B: the
# working tree. Builds, the GPU suite on B, rows.py's forward A B B A, then the harness's forward
# at T 1, 16, 64 (H 4096-8192) against Liger on B.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds a A
gpu_suite
S=1x5120,16x5120,1x6144,8x6144,16x6144,32x6144,1x7168,16x7168,32x7168,1x8192,16x8192,32x8192
S=$S,16x4096,16x12288
F=("plain bf16" "plain fp32" "residual bf16" "residual fp32")
abba rows.txt fwd $S "${F[@]}" -- "/tmp/a A" ". B"
echo "ab $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
  --hidden 4096,5120,6144,8192 --families plain,residual --candidates ours,liger \
  --ours-backends first_party --no-plots --no-host-overhead --time-budget 150 \
  --out /tmp/peers > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json  # committed as peers.json.gz (--compress)
echo "peers $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
grep "^| H=" $OUT/peers.md | head -40
