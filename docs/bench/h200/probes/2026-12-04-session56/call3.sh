#!/bin/bash
# Session 56 call 3: the fixed kernel's plain form loads the weights with the row's (WEIGHTS_FIRST)
# only up to 16 rows (step 48, measured at H 2048: 3-5% slower at T 64-256 that way). At H 256
# and 512 call 2 had Liger 7-10% ahead at T = 64 while our residual form (always weights first)
# ran as fast as or faster than the plain one there (call 1). A: HEAD, B: weights first at every
# row count (kFixedWeightsFirstRows 2^40, .device/b), rows.py's forward A B B A, plain BF16 and
# FP32 weights, T 17-1024 at H 256, 512, 1024, 2048.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_tree b
fwd_build /tmp/b B 8 & fwd_build . A 8; wait
echo "builds $(( $(date +%s) - t0 )) s"
S=
for h in 256 512 1024 2048; do for t in 17 32 64 128 256 1024; do S=$S${S:+,}${t}x$h; done; done
F=("plain bf16" "plain fp32")
abba rows.txt fwd $S "${F[@]}" -- ". A" "/tmp/b B"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
