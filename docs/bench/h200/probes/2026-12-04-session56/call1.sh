#!/bin/bash
# Session 56 call 1 (session 55's next.sh): 8 rows of one warp a CTA from 65 rows instead of
# 257 (session 55's fixed_rows_min_64.patch applied to the working tree; HEAD's forward_policy.h
# in .device/a). The GPU suite on the patched tree, then rows.py's forward A (HEAD) B (patched)
# at T 64-1024, H 256 and 512, A B B A.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_tree a
fwd_build /tmp/a A 4 & build_tree 12; wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
S=64x256,65x256,96x256,128x256,192x256,256x256,257x256,512x256
S=$S,64x512,65x512,96x512,128x512,192x512,256x512,257x512,512x512
F=("plain bf16" "plain fp32" "residual bf16")
ab rows.txt fwd $S "${F[@]}" -- "/tmp/a A" ". B"
ab rows.txt fwd $S "${F[@]}" -- ". B" "/tmp/a A"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
