#!/bin/bash
# Session 48 call 4: fixed-width instances at H 2560, 7168, 12288 and 16384 too (W: working tree)
# against HEAD 8c80258 (A: .device/A48): bits at those sizes, rows.py A W W A at T 1-256, then
# the GPU suite on W.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D48=docs/bench/h200/probes/2026-12-03-session48
copy_tree A48 || exit 1
fwd_build /tmp/A48 A 6 & build_tree 10 & wait
echo "builds $(( $(date +%s) - t0 )) s"
export BITS_H=2560,7168,12288,16384
(cd /tmp/A48 && timeout -s KILL 120 python3 $OLDPWD/$D48/bits.py save /tmp/bits_A.pt 2>&1 | tail -1)
timeout -s KILL 120 python3 $D48/bits.py check /tmp/bits_A.pt 2>&1 | tail -1 | tee $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
S="1x2560,16x2560,64x2560,256x2560,1x7168,16x7168,64x7168,256x7168"
S="$S,1x12288,16x12288,64x12288,128x12288,1x16384,16x16384,64x16384,128x16384"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows.txt fwd "$S" "$fw" -- "/tmp/A48 A" ". W" ". W" "/tmp/A48 A"
  echo "rows $fw $(( $(date +%s) - t0 )) s"
done
gpu_suite
grep -E "^(FAILED|ERROR)" $OUT/gpu_suite.log | head -20
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
awk -F'|' 'NR > 2 { printf "%-16s %-9s %s\n", $2, $3, $6 }' $OUT/table.txt
