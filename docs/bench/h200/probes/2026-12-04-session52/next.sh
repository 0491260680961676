#!/bin/bash
# Session 52's next call (written, not run): the full GPU suite on step 87's sources (session 52
# ran only its forward tests there), then the harness with the peers at H 256 and 512 from
# T = 1024, the rows step 87 changed (ours, torch.compile, Liger; BF16 and FP32 weights).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 300 python3 -m benchmarks.rmsnorm --device cuda --only fwd --hidden 256,512 \
  --rows 1024,4096,16384,65536 --families plain --weights bf16,fp32 \
  --candidates ours,compile,liger --ours-backends first_party --no-plots --no-host-overhead \
  --out /tmp/peers > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md /tmp/peers/results.json $OUT/ 2> /dev/null
grep "^| H=" $OUT/results.md | head -20
echo "peers $(( $(date +%s) - t0 )) s"
