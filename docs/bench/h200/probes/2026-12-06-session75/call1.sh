#!/bin/bash
# Session 75, call 1: the working tree is P (main + pace_instance.patch: pacing as the kernel's
# PACE instance, chosen by backward_policy.h's backward_pace). M = main (to_main.patch), O = the
# kernels of 1093b07 (before steps 107-108; to_1093b07.patch). Every module of P and M built, the
# GPU suite run on both, P's dx and dw bits against M's; rows.py's backward O M P, then P M O, at
# the paced shapes and at those where main measured slower than 1093b07 (session 74).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
S75=$(pwd)/docs/bench/h200/probes/2026-12-06-session75
BITS=$(pwd)/docs/bench/h200/probes/2026-12-05-session71/bits_ab.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
patched_tree M $S75/to_main.patch || exit 1
patched_tree O $S75/to_1093b07.patch || exit 1
build_matching /tmp/O O 4 'miles_rmsnorm_bwd__h(1536|2048|4096|5120|6144|8192)$' &
(cd /tmp/M && build_tree 6) &
build_tree 8
wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
(cd /tmp/M && timeout -s KILL 240 python3 -m pytest -q -p no:cacheprovider -p no:logging \
  --show-capture=no tests/gpu 2>&1 | tee $OUT/gpu_suite_M.log | tail -1 | sed "s/^/M /")
echo "tests $(( $(date +%s) - t0 )) s"
B=1000x2048,32768x2048,16384x4096,4096x8192,8192x8192,16400x8192,2048x4096
(cd /tmp/M && python3 $BITS save /tmp/bits_m.pt $B | tail -1)
python3 $BITS compare /tmp/bits_m.pt $B | tail -3 | sed "s/^/P /"
echo "bits $(( $(date +%s) - t0 )) s"
R=16384x2048,32768x2048,65536x2048,16384x4096,8192x8192,16384x8192,4096x8192
R=$R,2048x4096,4096x4096,16384x1536,4096x5120,4096x6144
ab rows.txt bwd $R "plain bf16" -- "/tmp/O O" "/tmp/M M" ". P"
ab rows.txt bwd $R "plain bf16" -- ". P" "/tmp/M M" "/tmp/O O"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows.txt
