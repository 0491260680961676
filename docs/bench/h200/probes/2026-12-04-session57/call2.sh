#!/bin/bash
# Session 57 call 2: step 93 (per-head views at H 256 and 512 through the fixed kernels' PER_HEAD
# instances) in the working tree. The GPU suite on it; rows.py's forward of per-head views
# ([T, 32, H][:, :24], "phs") A (.device/a: HEAD's kernel sources) against W (the working tree),
# A W W A, BF16 and FP32 weights, and plain rows at the same sizes as a control.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds a A
gpu_suite
S=1x256,2x256,4x256,16x256,64x256,128x256,256x256,1024x256,4096x256,1x512,16x512,64x512,256x512
S=$S,1024x512
F=("phs bf16" "phs fp32")
abba rows.txt fwd $S "${F[@]}" -- "/tmp/a A" ". W"
echo "ab $(( $(date +%s) - t0 )) s"
abba rows.txt fwd 16x256,384x256,3072x256,6144x256,384x512 "plain bf16" -- "/tmp/a A" ". W"
echo "control $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
