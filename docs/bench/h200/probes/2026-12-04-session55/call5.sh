#!/bin/bash
# Session 55 call 5: the forward against Liger on step 90 over the issue grid's T 1, 16, 256,
# 1024 (every H, plain BF16 and FP32 weights, the residual form), as session 48's call 5 ran it
# before steps 84-90 (ours and Liger only).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 420 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,256,1024 \
  --families plain,residual --candidates ours,liger --ours-backends first_party --no-plots \
  --no-host-overhead --time-budget 380 --out /tmp/peers > /tmp/peers.log 2>&1 \
  || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
grep "^| H=" $OUT/peers.md | awk -F'|' '{ if ($6+0 < $5+0) n++ } END { print n " of " NR " rows: Liger ahead" }'
