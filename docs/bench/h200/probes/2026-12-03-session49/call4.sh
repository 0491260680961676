#!/bin/bash
# (The MEK_FIXED_ROWS probe and the .device trees were working copies, not kept; see
# docs/bench/h200/probes/2026-12-03-session49.md.)
# Session 49 call 4: the landing tree Z (the working tree: the latency window from H 256, 2^23
# elements below H 1024, 2^21 from it): every module and the GPU suite; bits of Z against HEAD
# (A: .device/A49) at the window's edges; rows.py Z against Y (.device/Y49: 2^25 below H 1024)
# past Z's window.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D49=docs/bench/h200/probes/2026-12-03-session49
copy_tree A49 || exit 1
copy_tree Y49 || exit 1
build_tree 8 & fwd_build /tmp/A49 A 4 & fwd_build /tmp/Y49 Y 4 & wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
export BITS_CALLS="1024x256,4096x256,32768x256,32769x256,4096x512,16384x512,16385x512"
BITS_CALLS="$BITS_CALLS,2048x896,9362x896,9363x896,2048x1024,2049x1024,1365x1536,1366x1536"
(cd /tmp/A49 && timeout -s KILL 120 python3 $OLDPWD/$D49/bits.py save /tmp/bits_A.pt 2>&1 | tail -1)
timeout -s KILL 120 python3 $D49/bits.py check /tmp/bits_A.pt 2>&1 | tail -1 | tee $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
S="65536x256,131072x256,32768x512,65536x512,16384x896,16384x640"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows.txt fwd "$S" "$fw" -- ". Z" "/tmp/Y49 Y" "/tmp/Y49 Y" ". Z"
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
cut -c1-150 $OUT/table.txt
