#!/bin/bash
# Session 68: the harness's record of the peer grid (forward and backward, plain and
# residual, BF16 and FP32 weights, T 1-65536, every grid H) on main, on the card the call gets
# (an H100 80GB HBM3 in this session); torch.compile within 120 s of compiling.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 420 python3 -m benchmarks.rmsnorm --device cuda --only fwd,bwd \
  --rows 1,16,256,1024,4096,16384,65536 --families plain,residual \
  --candidates ours,aten,compile,liger --ours-backends first_party --compile-budget 120 \
  --time-budget 380 --no-plots --out /tmp/full_s68 > /tmp/full_s68.log 2>&1 \
  || tail -5 /tmp/full_s68.log
mkdir -p $OUT/full_s68 && cp /tmp/full_s68/results.* /tmp/full_s68.log $OUT/full_s68/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\* Run|^\* Copy" /tmp/full_s68/results.md
