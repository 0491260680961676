#!/bin/bash
# Session 71, call 1 (about 6 minutes, the H200 if lent): main on the card (every module, the GPU
# suite: 5ffaf06 never ran on a GPU); step 101 A/B (session 68's h200_call.sh: R = the 1024-thread
# CTAs' ring always three stages); and the backward row loop's instruction count at H 2048:
# G = the dx coefficient by step 88's power-of-two reciprocal (g_pow2_coefficient.py, a candidate),
# V = an upper bound of specialising the loop on H 2048 (p.tpr and H as constants, valid at H 2048
# only: sed over backward.cuh). Bits of G and V against main first, then M G G M and M V V M.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
POLICY=$PKG/include/miles_rmsnorm/backward_policy.h
BW=$PKG/include/miles_rmsnorm/backward.cuh
rm -rf /tmp/R && cp -r . /tmp/R && (cd /tmp/R && sed -i 's/rows >= kBackwardLargeRows ? 2 : 3;/rows >= kBackwardLargeRows ? 3 : 3;/' $POLICY \
  && grep -q "? 3 : 3;" $POLICY && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
rm -rf /tmp/G && cp -r . /tmp/G && (cd /tmp/G && python3 $P/g_pow2_coefficient.py \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
rm -rf /tmp/V && cp -r . /tmp/V && (cd /tmp/V && sed -i 's/p\.tpr/256/g; s/const float hidden_f = static_cast<float>(p.hidden);/const float hidden_f = 2048.0f;/' $BW \
  && grep -q "2048.0f" $BW && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/R R 2 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
build_matching /tmp/G G 2 'miles_rmsnorm_bwd__h2048$' &
build_matching /tmp/V V 2 'miles_rmsnorm_bwd__h2048$' &
build_tree 12
wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
SH=16384x2048,4096x2048,65536x2048,1000x2048
python3 $P/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in G V; do (cd /tmp/$v && python3 $P/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
bwd_ab r3.txt "/tmp/R R" ". M"
L=16384x2048,32768x2048,65536x2048
abba gv.txt bwd $L "plain bf16" -- ". M" "/tmp/G G"
abba gv.txt bwd $L "plain bf16" -- "/tmp/V V" ". M"
ab gv.txt bwd 16384x2048 "plain fp32" "residual bf16" -- ". M" "/tmp/G G" "/tmp/V V"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/gv.txt
