#!/bin/bash
# (The MEK_FIXED_ROWS probe and the .device trees were working copies, not kept; see
# docs/bench/h200/probes/2026-12-03-session49.md.)
# Session 49 call 3: the window from H 256 with 2^23 elements below H 1024 (X: .device/X49)
# against 2^21 (V: .device/V49) past 2^21 elements; then V's window with the probe of R rows of
# one warp a CTA (MEK_FIXED_ROWS) at H 256 and 512, 2048-8192 rows.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree V49 || exit 1
copy_tree X49 || exit 1
fwd_build /tmp/V49 V 8 & fwd_build /tmp/X49 X 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
S1="8192x512,16384x256,16384x512,32768x256,12288x640,8192x896"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows1.txt fwd "$S1" "$fw" -- "/tmp/V49 V" "/tmp/X49 X" "/tmp/X49 X" "/tmp/V49 V"
done
echo "rows1 $(( $(date +%s) - t0 )) s"
S2="2048x256,4096x256,8192x256,2048x512,4096x512"
export MEK_FIXED_ROWS_MIN=1
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  for r in 1 4 8 8 4 1; do
    (export MEK_FIXED_ROWS=$r; ab rows2.txt fwd "$S2" "$fw" -- "/tmp/V49 R$r")
  done
done
echo "rows2 $(( $(date +%s) - t0 )) s"
for f in rows1 rows2; do
  python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/$f.txt > $OUT/table_$f.txt
done
cat $OUT/table_rows1.txt $OUT/table_rows2.txt | cut -c1-150
