#!/bin/bash
# Session 71, call 3 (about 3 minutes): do call 1's V (the row loop with H 2048's row width as
# constants) and call 2's pacing add up? VP = V + pace.patch at slack 1; P0 = pace.patch at slack
# 0 (a CTA waits until the grid's average has caught up with it). M = main. Bits first.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
BW=$PKG/include/miles_rmsnorm/backward.cuh
rm -rf /tmp/VP && cp -r . /tmp/VP && (cd /tmp/VP && git apply $P/pace.patch \
  && sed -i 's/p\.tpr/256/g; s/const float hidden_f = static_cast<float>(p.hidden);/const float hidden_f = 2048.0f;/' $BW \
  && grep -q "2048.0f" $BW && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
rm -rf /tmp/P0 && cp -r . /tmp/P0 && (cd /tmp/P0 && git apply $P/pace.patch \
  && sed -i "s/#define MILES_PACE_SLACK 1/#define MILES_PACE_SLACK 0/" $BW \
  && grep -q "MILES_PACE_SLACK 0" $BW && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/VP VP 4 'miles_rmsnorm_bwd__h2048$' &
build_matching /tmp/P0 P0 4 'miles_rmsnorm_bwd__h2048$' &
build_matching . M 6 'miles_rmsnorm_bwd__h2048$'
wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x2048
python3 $P/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in VP P0; do (cd /tmp/$v && python3 $P/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
L=16384x2048,32768x2048,65536x2048
abba vp.txt bwd $L "plain bf16" -- ". M" "/tmp/VP VP"
abba vp.txt bwd 16384x2048,16384x4096,65536x2048 "plain bf16" -- "/tmp/P0 P0" ". M"
ab vp.txt bwd 16384x2048 "residual bf16" -- ". M" "/tmp/VP VP" "/tmp/P0 P0"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/vp.txt
