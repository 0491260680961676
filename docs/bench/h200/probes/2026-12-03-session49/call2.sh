#!/bin/bash
# (The MEK_FIXED_ROWS probe and the .device trees were working copies, not kept; see
# docs/bench/h200/probes/2026-12-03-session49.md.)
# Session 49 call 2: the latency window from H 256 (V: .device/V49) against the working tree's
# window from H 1024 (W) at H 256-896 past the small batches; the fixed kernel's probe of R rows
# of one warp a CTA (MEK_FIXED_ROWS) again, more passes, at H 256 and 512.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree V49 || exit 1
fwd_build /tmp/V49 V 8 & fwd_build . W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
S1="2048x256,4096x256,8192x256,2048x512,4096x512,1536x768,2048x896,2340x896"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows1.txt fwd "$S1" "$fw" -- ". W" "/tmp/V49 V" "/tmp/V49 V" ". W"
done
echo "rows1 $(( $(date +%s) - t0 )) s"
S2="256x256,512x256,1024x256,256x512,512x512,1024x512"
export MEK_FIXED_ROWS_MIN=1
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  for r in 1 4 8 8 4 1; do (export MEK_FIXED_ROWS=$r; ab rows2.txt fwd "$S2" "$fw" -- ". R$r"); done
done
echo "rows2 $(( $(date +%s) - t0 )) s"
for f in rows1 rows2; do
  python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/$f.txt > $OUT/table_$f.txt
done
cat $OUT/table_rows1.txt $OUT/table_rows2.txt | cut -c1-150
