#!/bin/bash
# (The MEK_FIXED_ROWS and MEK_WINDOW_MIN probes were working copies of the launcher, not kept;
# docs/bench/h200/probes/2026-12-03-session50.md says what they launched.)
# Session 50 call 1: HEAD ed3d1d2 (A: .device/A50) against the working tree's probes.
# rows1: the fixed kernel with R rows of one warp a CTA at H 256 and 512 (MEK_FIXED_ROWS=R from
# MEK_FIXED_ROWS_MIN rows; A R4 R8 R8 R4 A). rows2: the latency window at H 520-1023 for FP32
# weights and the residual form up to 2^25 elements (MEK_WINDOW_MIN=520, MEK_WINDOW_LOG=25; A V V A).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A50 || exit 1
fwd_build /tmp/A50 A 8 & fwd_build . W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
S1="512x256,1024x256,2048x256,4096x256,16384x256,65536x256"
S1="$S1,512x512,1024x512,2048x512,4096x512,16384x512,65536x512"
export MEK_FIXED_ROWS_MIN=1
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows1.txt fwd "$S1" "$fw" -- "/tmp/A50 A"
  for r in 4 8 8 4; do (export MEK_FIXED_ROWS=$r; ab rows1.txt fwd "$S1" "$fw" -- ". R$r"); done
  ab rows1.txt fwd "$S1" "$fw" -- "/tmp/A50 A"
done
echo "rows1 $(( $(date +%s) - t0 )) s"
unset MEK_FIXED_ROWS_MIN
S2="2048x576,8192x576,2048x640,12288x640,32768x640,4096x768,16384x768,2048x896,8192x896,32768x896"
for fw in "plain fp32" "residual bf16"; do
  ab rows2.txt fwd "$S2" "$fw" -- "/tmp/A50 A"
  (export MEK_WINDOW_MIN=520 MEK_WINDOW_LOG=25; ab rows2.txt fwd "$S2" "$fw" -- ". V" ". V")
  ab rows2.txt fwd "$S2" "$fw" -- "/tmp/A50 A"
done
echo "rows2 $(( $(date +%s) - t0 )) s"
for f in rows1 rows2; do
  python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/$f.txt > $OUT/table_$f.txt
done
cat $OUT/table_rows1.txt $OUT/table_rows2.txt | cut -c1-150
