#!/bin/bash
# Session 71, call 3 (about 2 minutes): do call 1's V (the row loop with H 2048's row width as
# constants) and call 2's pacing add up? VP = V + pace.patch at slack 1. M = main. Bits first.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
BW=$PKG/include/miles_rmsnorm/backward.cuh
rm -rf /tmp/VP && cp -r . /tmp/VP && (cd /tmp/VP && git apply $P/pace.patch \
  && sed -i 's/p\.tpr/256/g; s/const float hidden_f = static_cast<float>(p.hidden);/const float hidden_f = 2048.0f;/' $BW \
  && grep -q "2048.0f" $BW && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/VP VP 8 'miles_rmsnorm_bwd__h2048$' &
build_matching . M 8 'miles_rmsnorm_bwd__h2048$'
wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x2048
python3 $P/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in VP; do (cd /tmp/$v && python3 $P/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
abba vp.txt bwd 16384x2048,65536x2048 "plain bf16" -- ". M" "/tmp/VP VP"
ab vp.txt bwd 16384x2048 "residual bf16" -- ". M" "/tmp/VP VP"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/vp.txt
