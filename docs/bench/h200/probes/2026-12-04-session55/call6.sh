#!/bin/bash
# Session 55 call 6: 8 rows of one warp a CTA (forward_fixed_rows) below 257 rows? Call 5 had
# Liger 11-13% ahead at 256 x 256 and 256 x 512, where each row takes a one-warp CTA. A: HEAD,
# B: kFixedRowsMinRows 32 (.device/b), rows.py's forward A B B A at T 64-256, H 256 and 512.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_tree b
fwd_build /tmp/b B 8 & fwd_build . A 8; wait
echo "builds $(( $(date +%s) - t0 )) s"
S=64x256,128x256,192x256,256x256,64x512,128x512,192x512,256x512
F=("plain bf16" "plain fp32" "residual bf16")
abba rows.txt fwd $S "${F[@]}" -- ". A" "/tmp/b B"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
