#!/bin/bash
# Session 57 call 4: the loop-free and split forwards' per-head rows addressed by row_division
# (a multiply and a shift) instead of a 64-bit division, in the working tree (W), against step 93
# (.device/a: HEAD's device.cuh, forward.cuh and forward_split.cuh; A). The GPU suite on W;
# rows.py's strided per-head views at the sizes whose per-head views keep those kernels (128,
# 1024, 2048), A W W A; then W's per-head views at D 128 and 256 against torch.compile and Liger
# (per_head_peers.py).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=docs/bench/h200/probes/2026-12-04-session57
overlay_builds a A
gpu_suite
S=1x128,4x128,16x128,64x128,256x128,1024x128,4x1024,16x1024,64x1024,4x2048,16x2048,64x2048
abba rows.txt fwd $S "phs bf16" -- "/tmp/a A" ". W"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
timeout -s KILL 200 python3 $Q/per_head_peers.py 128,256 1,4,16,64,256,1024 2>/dev/null \
  | tee $OUT/peers.txt
echo "peers $(( $(date +%s) - t0 )) s"
