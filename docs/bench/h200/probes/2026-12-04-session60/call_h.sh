#!/bin/bash
# Session 60's prepared follow-up to call_c.sh (not run): the harness's backward at T 4096, 16384
# and 65536 (plain and residual, BF16 and FP32 weights, the grid's eight H; ours, PyTorch's fused
# op, torch.compile, Liger) on the tree call_c.sh picks — LAYERS=B (main + fold_tree.patch) or
# LAYERS=C (that + large_chunks.patch, the default) — against session 58's run of step 95.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P59=docs/bench/h200/probes/2026-12-04-session59
P=docs/bench/h200/probes/2026-12-04-session60
put() { { patch -s -p1 < $1 || git apply $1; } && python3 tools/gen_kernel_build_json.py > /dev/null; }
LAYERS=${LAYERS:-C}
rm -rf /tmp/T && cp -r . /tmp/T && cd /tmp/T && put $P59/fold_tree.patch || exit 1
if [ "$LAYERS" = C ]; then put $P/large_chunks.patch || exit 1; fi
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 400 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
  --ours-backends first_party --compile-budget 90 --time-budget 330 --no-plots \
  --no-host-overhead --compare docs/bench/h200/bwd_dealt_s58/call5/bwd_s58/results.json.gz \
  --out /tmp/bwd_s60 > /tmp/bwd_s60.log 2>&1 || tail -5 /tmp/bwd_s60.log
mkdir -p $OUT/bwd_s60 && cp /tmp/bwd_s60/results.* /tmp/bwd_s60.log $OUT/bwd_s60/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(2048|4096)" /tmp/bwd_s60/results.md | head -12
