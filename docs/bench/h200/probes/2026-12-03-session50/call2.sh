#!/bin/bash
# Session 50 call 2: the landing tree (step 85: the fixed kernel with 8 rows of one warp a CTA at
# H 256 and 512, forward_fixed_rows; the latency window at H 520-1016 up to 2^25 elements): every
# module and the GPU suite; bits against HEAD (A: .device/A50, session 49's bits.py); rows.py
# A W W A over both rules.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D49=docs/bench/h200/probes/2026-12-03-session49
copy_tree A50 || exit 1
build_tree 12 & fwd_build /tmp/A50 A 4 & wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
export BITS_CALLS="1025x256,2048x256,3072x256,3073x256,16389x256,2051x512,3072x512,65536x512"
BITS_CALLS="$BITS_CALLS,2048x520,64527x520,64528x520,2048x896,37449x896,37450x896"
(cd /tmp/A50 && timeout -s KILL 90 python3 $OLDPWD/$D49/bits.py save /tmp/bits_A.pt 2>&1 | tail -1)
timeout -s KILL 90 python3 $D49/bits.py check /tmp/bits_A.pt 2>&1 | tail -1 | tee $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
S="1024x256,1025x256,2048x256,3072x256,4096x256,16384x256,2048x512,3072x512,16384x512"
S="$S,65536x512,2048x640,8192x896"
for fw in "plain bf16" "plain fp32" "residual bf16"; do
  ab rows.txt fwd "$S" "$fw" -- "/tmp/A50 A" ". W" ". W" "/tmp/A50 A"
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
cut -c1-150 $OUT/table.txt
