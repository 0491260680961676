#!/bin/bash
# Session 56 call 6, on step 92: the weights first at the sizes calls 3-4 did not cover at small
# T (H 1536, 2560, 3072: rows of three to six warps; Liger 12% ahead at 64 x 1536 in call 5's
# harness run). A: HEAD, B: weights first at every row count (.device/b), A B B A, plain BF16 and
# FP32 weights, T 32-256.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_tree b
fwd_build /tmp/b B 8 & fwd_build . A 8; wait
echo "builds $(( $(date +%s) - t0 )) s"
S=32x1536,64x1536,128x1536,256x1536,32x2560,64x2560,128x2560,32x3072,64x3072,128x3072
F=("plain bf16" "plain fp32")
abba rows.txt fwd $S "${F[@]}" -- ". A" "/tmp/b B"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
