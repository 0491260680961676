#!/bin/bash
# Session 48 call 3: fixed-width small-batch forward instances at H 256, 512 (rows of one warp),
# 1024, 1536 and 3072 (W: working tree) against HEAD 8c80258 (A: .device/A48): bits (bits.py,
# A saves, W checks), then rows.py A W W A at T 1, 16, 64, 256, 1024.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D48=docs/bench/h200/probes/2026-12-03-session48
copy_tree A48 || exit 1
fwd_build /tmp/A48 A 8 & fwd_build . W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/A48 && timeout -s KILL 120 python3 $OLDPWD/$D48/bits.py save /tmp/bits_A.pt 2>&1 | tail -1)
timeout -s KILL 120 python3 $D48/bits.py check /tmp/bits_A.pt 2>&1 | tail -1 | tee $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
S="1x256,16x256,64x256,256x256,1x512,16x512,64x512,256x512"
S="$S,1x1024,16x1024,64x1024,256x1024,1x1536,16x1536,64x1536,256x1536,1x3072,16x3072,64x3072,256x3072"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows.txt fwd "$S" "$fw" -- "/tmp/A48 A" ". W" ". W" "/tmp/A48 A"
  echo "rows $fw $(( $(date +%s) - t0 )) s"
done
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
awk -F'|' 'NR > 2 { printf "%-16s %-9s %s\n", $2, $3, $6 }' $OUT/table.txt
