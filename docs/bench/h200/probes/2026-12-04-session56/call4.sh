#!/bin/bash
# Session 56 call 4: step 92's first part (the fixed kernel's rows of one warp, H 256 and 512,
# load the weights with the row at every row count, fixed_forward_weights_first) in the working
# tree: the GPU suite on it; then, for a second part, B (.device/b: weights first at every row
# count and H) against A (the working tree, whose rule at H >= 1024 is HEAD's) at H 1024-8192
# up to the latency window's end (2^21 elements), where call 3 had 1024 x 1024 and 1024 x 2048
# 5-6% faster with the weights first; H 256 and 512 (the same rule in A and B) as the control.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds b B
gpu_suite
S=384x1024,512x1024,768x1024,1024x1024,2048x1024,512x1536,1024x1536,1365x1536
S=$S,256x2048,512x2048,768x2048,1024x2048,128x4096,256x4096,512x4096,64x8192,128x8192,256x8192
S=$S,64x256,1024x256,64x512,1024x512
F=("plain bf16" "plain fp32")
abba rows.txt fwd $S "${F[@]}" -- ". A" "/tmp/b B"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
