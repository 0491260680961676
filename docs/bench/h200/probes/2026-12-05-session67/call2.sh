#!/bin/bash
# Session 67 call 2 (about 4 minutes with builds): session 66's one-run reading that a two-stage
# ring for the deterministic backward's 1024-thread CTAs (one CTA an SM; MILES_EXT_KERNELS_SMEM_LIMIT
# =150000 leaves 2 stages, 131 KB, where 3 need 192 KB; the 512-thread CTAs keep 3 stages) is
# 0.9% faster at 16384 x 2048 and x 4096, checked both ways: rows.py's backward A D D A (plain
# BF16, seven shapes), then A D with the residual form and FP32 weights at the two short shapes.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . A 8 'miles_rmsnorm_bwd__h(2048|4096|6144|8192)(_|$)'
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x2048,16384x4096,32768x2048,65536x2048,65536x4096,16384x6144,16384x8192
envs d2.txt plain bf16 $SH "A X=0" "D MILES_EXT_KERNELS_SMEM_LIMIT=150000" \
  "D MILES_EXT_KERNELS_SMEM_LIMIT=150000" "A X=0"
for fam in "residual bf16" "plain fp32"; do
  envs d2.txt $fam 16384x2048,16384x4096 "A X=0" "D MILES_EXT_KERNELS_SMEM_LIMIT=150000"
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/d2.txt
