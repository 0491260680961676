#!/bin/bash
# Session 56 call 5: step 92 as landed (fixed_forward_weights_first: the plain form loads the
# weights with the row up to 16 rows, at every row count at H 256 and 512, and from 768 rows) in
# the working tree. The GPU suite on it; rows.py's forward A (.device/a: HEAD's policy header and
# launcher) against N (the working tree), A N N A, on rows the rule changed and two it did not
# (256 x 2048, 512 x 4096); then the harness, ours and Liger, at T 64 and 1024, H 256-2048.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds a A
gpu_suite
S=17x256,32x256,64x256,17x512,32x512,64x512,768x1024,1024x1024,2048x1024,1024x1536
S=$S,768x2048,1024x2048,256x2048,512x4096
F=("plain bf16" "plain fp32")
abba rows.txt fwd $S "${F[@]}" -- "/tmp/a A" ". N"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
timeout -s KILL 170 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 64,1024 \
  --hidden 256,512,1024,1536,2048 --families plain --candidates ours,liger \
  --ours-backends first_party --no-plots --no-host-overhead --time-budget 130 --out /tmp/peers \
  > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
grep "^| H=" $OUT/peers.md
