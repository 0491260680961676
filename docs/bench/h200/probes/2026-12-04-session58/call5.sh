#!/bin/bash
# Session 58 call 5: step 95's final sources (dealt chunks at one vector a thread, the atomic
# windows above H = 8192 only): the GPU suite, then the harness's backward at T 16384 and 65536
# (plain and residual, BF16 and FP32 weights, the grid's eight H; ours, PyTorch's fused op,
# torch.compile, Liger) compared with session 57's record run.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 300 python3 -m benchmarks.rmsnorm --device cuda --only bwd --rows 16384,65536 \
  --families plain,residual --candidates ours,aten,compile,liger --ours-backends first_party \
  --compile-budget 90 --time-budget 240 --no-plots --no-host-overhead \
  --compare docs/bench/h200/full_s57/results.json.gz --out /tmp/bwd_s58 > /tmp/bwd_s58.log 2>&1 \
  || tail -5 /tmp/bwd_s58.log
mkdir -p $OUT/bwd_s58 && cp /tmp/bwd_s58/results.* /tmp/bwd_s58.log $OUT/bwd_s58/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(2048|4096)" /tmp/bwd_s58/results.md | head -12
