#!/bin/bash
# Session 57 call 5: step 94 (BF16 plain rows of half a warp, H 128, on the loop-free grid of two
# rows a CTA through forward_fixed_kernel at TPR 16, per-head views included) in the working tree.
# The GPU suite; rows.py A (MILES_EXT_KERNELS_FIXED_HALF_WARP=0: forward_rows_kernel) against W
# (the fixed kernel), the same build, A W W A; then W's per-head views at D 128 with the peers.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=docs/bench/h200/probes/2026-12-04-session57
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
P=1x128,2x128,16x128,64x128,256x128,1024x128,2048x128,4096x128
H=1x128,2x128,4x128,16x128,64x128,128x128,170x128
for pass in "A 0" "W 1" "W 1" "A 0"; do
  set -- $pass
  for fam in "plain bf16 $P" "plain fp32 $P" "phs bf16 $H" "phs fp32 $H"; do
    set -- $1 $2 $fam
    MILES_EXT_KERNELS_FIXED_HALF_WARP=$2 timeout -s KILL 60 python3 $ROWS_PY fwd $3 $4 $5 \
      2>/dev/null | sed "s/^/$1 $3 $4 /" >> $OUT/rows.txt
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
timeout -s KILL 100 python3 $Q/per_head_peers.py 128 1,4,16,64,170 2>/dev/null | tee $OUT/peers.txt
echo "peers $(( $(date +%s) - t0 )) s"
