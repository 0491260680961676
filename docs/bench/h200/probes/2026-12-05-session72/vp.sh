#!/bin/bash
# Session 72 (about 4-5 minutes; written for the H200, which never timed step 106): session 71's
# two levers on the deterministic backward at H 2048, alone and together, against main (M):
# V = the row loop with H 2048's row width as constants (an upper bound, valid at H 2048 only),
# P = pace.patch at slack 1 (a CTA more than one iteration ahead of the grid's average waits),
# VP = both. Bits against main's first, then A B B A at 16384 and 65536 rows, one pass of the
# FP32 weights and the residual form at 16384 × 2048.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
BW=$PKG/include/miles_rmsnorm/backward.cuh
v_edit() { sed -i 's/p\.tpr/256/g; s/const float hidden_f = static_cast<float>(p.hidden);/const float hidden_f = 2048.0f;/' $BW && grep -q "2048.0f" $BW; }
for t in V P VP; do
  rm -rf /tmp/$t && cp -r . /tmp/$t && (cd /tmp/$t \
    && { [ "$t" = V ] || git apply $Q/pace.patch; } \
    && { [ "$t" = P ] || v_edit; } \
    && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
  build_matching /tmp/$t $t 4 'miles_rmsnorm_bwd__h2048$' &
done
build_matching . M 4 'miles_rmsnorm_bwd__h2048$'
wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x2048,65536x2048
python3 $Q/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in V P VP; do (cd /tmp/$v && python3 $Q/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
L=16384x2048,65536x2048
abba vp.txt bwd $L "plain bf16" -- ". M" "/tmp/VP VP"
abba vp.txt bwd $L "plain bf16" -- "/tmp/V V" ". M"
abba vp.txt bwd $L "plain bf16" -- ". M" "/tmp/P P"
ab vp.txt bwd 16384x2048 "plain fp32" "residual bf16" -- ". M" "/tmp/V V" "/tmp/P P" "/tmp/VP VP"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/vp.txt
