#!/bin/bash
# (The MEK_FIXED_ROWS probe and the .device trees were working copies, not kept; see
# docs/bench/h200/probes/2026-12-03-session49.md.)
# Session 49 call 1: the GPU suite on HEAD c184ad5 (A: .device/A49; step 83's evict_last rule
# had not run in the suite), then rows.py A/B of the working tree (W): the latency window from
# H 1024 (H 1024-1536 small-batch path up to 2^21 elements), and probe instances of the fixed
# kernel with R rows of one warp a CTA at H 256 and 512 (MEK_FIXED_ROWS=R, from
# MEK_FIXED_ROWS_MIN rows).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A49 || exit 1
(cd /tmp/A49 && build_tree 10) & fwd_build . W 6 & wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/A49 && gpu_suite)
S1="512x1024,1024x1024,2048x1024,512x1536,1024x1536,1365x1536,1024x1280,1600x1280"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows1.txt fwd "$S1" "$fw" -- "/tmp/A49 A" ". W" ". W" "/tmp/A49 A"
done
echo "rows1 $(( $(date +%s) - t0 )) s"
S2="64x256,256x256,1024x256,64x512,256x512,1024x512"
export MEK_FIXED_ROWS_MIN=1
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows2.txt fwd "$S2" "$fw" -- "/tmp/A49 A"
  for r in 2 4 8; do (export MEK_FIXED_ROWS=$r; ab rows2.txt fwd "$S2" "$fw" -- ". R$r"); done
  ab rows2.txt fwd "$S2" "$fw" -- "/tmp/A49 A"
done
echo "rows2 $(( $(date +%s) - t0 )) s"
for f in rows1 rows2; do
  python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/$f.txt > $OUT/table_$f.txt
done
cat $OUT/table_rows1.txt $OUT/table_rows2.txt | cut -c1-150
