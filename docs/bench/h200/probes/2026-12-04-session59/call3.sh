#!/bin/bash
# Session 59's prepared follow-up to call2.sh (not run): the harness's backward at T 4096, 16384
# and 65536 (plain and residual, BF16 and FP32 weights, the grid's eight H; ours, PyTorch's fused
# op, torch.compile, Liger) on main + fold_tree.patch (/tmp/B, built by call2.sh on a warm
# machine, else here), compared with session 58's run of step 95 (its call 5).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-04-session59
if [ ! -d /tmp/B ]; then
  cp -r . /tmp/B && (cd /tmp/B && { patch -s -p1 < $P/fold_tree.patch \
    || git apply $P/fold_tree.patch; } && python3 tools/gen_kernel_build_json.py > /dev/null) \
    || exit 1
  (cd /tmp/B && build_tree 16)
  echo "builds $(( $(date +%s) - t0 )) s"
fi
cd /tmp/B
timeout -s KILL 400 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
  --ours-backends first_party --compile-budget 90 --time-budget 330 --no-plots \
  --no-host-overhead --compare docs/bench/h200/bwd_dealt_s58/call5/bwd_s58/results.json.gz \
  --out /tmp/bwd_s59 > /tmp/bwd_s59.log 2>&1 || tail -5 /tmp/bwd_s59.log
mkdir -p $OUT/bwd_s59 && cp /tmp/bwd_s59/results.* /tmp/bwd_s59.log $OUT/bwd_s59/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(2048|4096)" /tmp/bwd_s59/results.md | head -12
