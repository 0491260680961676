#!/bin/bash
# Session 62's follow-up to session 60's call_c.sh, with steps 96-97 on main: the harness's
# backward at T 4096, 16384 and 65536 (plain and residual, BF16 and FP32 weights, the grid's
# eight H; ours, PyTorch's fused op, torch.compile, Liger) on the working tree, against session
# 58's run of step 95. (Session 60's call_h.sh applies the patches itself, so it no longer fits.)
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 400 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
  --ours-backends first_party --compile-budget 90 --time-budget 330 --no-plots \
  --no-host-overhead --compare docs/bench/h200/bwd_dealt_s58/call5/bwd_s58/results.json.gz \
  --out /tmp/bwd_s62 > /tmp/bwd_s62.log 2>&1 || tail -5 /tmp/bwd_s62.log
mkdir -p $OUT/bwd_s62 && cp /tmp/bwd_s62/results.* /tmp/bwd_s62.log $OUT/bwd_s62/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(2048|4096)" /tmp/bwd_s62/results.md | head -12
