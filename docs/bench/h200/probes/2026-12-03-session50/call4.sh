#!/bin/bash
# Session 50 call 4: the landed sources (W, 0b75454) against B (.device/B50: forward_fixed_rows
# from 257 rows instead of past the small batches, 1024 rows at H 256 and 512), A/B W B B W W B
# at 256-1024 rows.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree B50 || exit 1
fwd_build . W 8 & fwd_build /tmp/B50 B 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="384x256,512x256,768x256,1024x256,384x512,512x512,768x512,1024x512"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows.txt fwd "$S" "$fw" -- ". W" "/tmp/B50 B" "/tmp/B50 B" ". W" ". W" "/tmp/B50 B"
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
cut -c1-150 $OUT/table.txt
