#!/bin/bash
# Prepared for the next device session (about 2 minutes with the forward's build): fwd_twice.py
# (is torch.compile's lead on the small forward a cold start's or the warm path's?) at T 1-16,
# H 256 and 512, with 1 x 2048 and 16 x 4096 as controls.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session68
fwd_build . F 16
echo "builds $(( $(date +%s) - t0 )) s"
for w in bf16 fp32; do
  timeout -s KILL 150 python3 $P/fwd_twice.py 1x256,16x256,1x512,16x512,1x2048,16x4096 $w \
    2>&1 | grep -v -i warn | tee -a $OUT/twice.txt
done
echo "done $(( $(date +%s) - t0 )) s"
