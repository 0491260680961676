#!/bin/bash
# Session 48 call 6: the evict_last rows' rule at T 1024-4096 (call 5's harness had plain 1024 x
# 4096 and x 8192 and the residual 1024 x 4096 15-18% over session 32, before steps 72-74). K
# (.device/K48): the plain form at 4096 and 8192 and the residual form from 4096 keep rows in L2
# only from 2^25 elements; against the working tree (W), rows.py W K K W.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree K48 || exit 1
fwd_build /tmp/K48 K 8 & fwd_build . W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
ab rows.txt fwd "1024x4096,4096x4096,8192x4096,1024x8192,2048x8192" "plain bf16" -- \
  ". W" "/tmp/K48 K" "/tmp/K48 K" ". W"
ab rows.txt fwd "1024x4096,4096x4096,2048x6144" "residual bf16" -- \
  ". W" "/tmp/K48 K" "/tmp/K48 K" ". W"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
