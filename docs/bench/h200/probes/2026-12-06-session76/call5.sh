#!/bin/bash
# Session 76, call 5: the late FP32 weights of two vectors a thread requested earlier, in
# finish_loop_free_row: L = both vectors' weights ahead of rstd (late_together.patch; ptxas spills
# 24-40 bytes), Lc = the first vector's ahead of rstd (late_first_early.patch; no spill). Bits of
# each against main (M); M L Lc Lc L M of the FP32-weight forward.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
patched_tree L $D76/late_together.patch || exit 1
patched_tree Lc $D76/late_first_early.patch || exit 1
build_matching . M 6 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/L L 5 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/Lc Lc 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,20000x256
python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
for v in L Lc; do (cd /tmp/$v && python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -2 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
R=4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,1024x6144,1024x8192,16384x2048,16384x8192
R=$R,16384x256,65536x256
ab rows5.txt fwd $R "plain fp32" -- ". M" "/tmp/L L" "/tmp/Lc Lc"
ab rows5.txt fwd $R "plain fp32" -- "/tmp/Lc Lc" "/tmp/L L" ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows5.txt
