#!/bin/bash
# Session 48 call 5: the harness with the peers on the kept sources (fixed instances at H 256-12288
# but 16384): the forward at T 1, 16, 256, 1024 over the eight hidden sizes, plain and
# residual, BF16 and FP32 weights, ours against Liger and aten; torch.compile at H 256 and 512.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 300 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,256,1024 --families plain,residual \
  --candidates ours,liger,aten --ours-backends first_party --no-plots --no-host-overhead \
  --out /tmp/peers > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,256,1024 --families plain,residual \
  --hidden 256,512 --families plain --candidates ours,compile --ours-backends first_party \
  --no-plots --no-host-overhead --out /tmp/comp > /tmp/comp.log 2>&1 || tail -5 /tmp/comp.log
cp /tmp/comp/results.md $OUT/compile.md
echo "compile $(( $(date +%s) - t0 )) s"
grep -E "^\| H=" $OUT/peers.md | head -80
