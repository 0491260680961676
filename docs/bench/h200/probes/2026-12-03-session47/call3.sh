#!/bin/bash
# Session 47, call 3: the landed sources (the working tree, step 82): every module built, the GPU
# suite, then the harness at H 256 (plain and the strided per-head view, BF16 and FP32 weights)
# against aten, torch.compile and Liger. Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 240 python3 -m benchmarks.rmsnorm --device cuda --only fwd --hidden 256 \
  --rows 1024,4096,16384,65536 --families plain,per_head_strided \
  --candidates ours,aten,compile,liger --ours-backends first_party --no-plots \
  --no-host-overhead --out /tmp/peers > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
grep "^| H=\|^| per" $OUT/peers.md | cut -c1-200
