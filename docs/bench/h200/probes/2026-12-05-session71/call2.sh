#!/bin/bash
# Session 71, call 2 (about 4 minutes): pacing the deterministic backward's CTAs (pace.patch, a
# probe): with one chunk a CTA, a CTA more than S iterations ahead of the grid's average (a count
# of finished iterations in the workspace's third counter word) waits before issuing its next rows,
# so that the SMs the memory system serves first leave bandwidth to the others and the grid ends
# together. Timing only: the bits must be main's. P1 = S 1, P2 = S 2; M = main.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
BW=$PKG/include/miles_rmsnorm/backward.cuh
for s in 1 2; do
  rm -rf /tmp/P$s && cp -r . /tmp/P$s && (cd /tmp/P$s && git apply $P/pace.patch \
    && sed -i "s/#define MILES_PACE_SLACK 1/#define MILES_PACE_SLACK $s/" $BW \
    && grep -q "MILES_PACE_SLACK $s" $BW && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
  build_matching /tmp/P$s P$s 2 'miles_rmsnorm_bwd__h2048$' &
done
build_matching . M 4 'miles_rmsnorm_bwd__h2048$'
wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x2048,65536x2048
python3 $P/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in P1 P2; do (cd /tmp/$v && python3 $P/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
L=16384x2048,16384x4096,65536x2048
abba pace.txt bwd $L "plain bf16" -- ". M" "/tmp/P1 P1"
abba pace.txt bwd $L "plain bf16" -- "/tmp/P2 P2" ". M"
ab pace.txt bwd 16384x2048 "plain fp32" "residual bf16" -- ". M" "/tmp/P1 P1" "/tmp/P2 P2"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/pace.txt
