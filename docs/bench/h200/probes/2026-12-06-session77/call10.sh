#!/bin/bash
# Session 77, prepared for the next session (never ran here: the device time was spent): MC = the
# loop-free forward's FP32 weights multicast over clusters of C CTAs (multicast_weights.patch,
# forward_rows_multicast_kernel: each CTA copies 1/C of the weights into every CTA's shared memory
# with one bulk copy, so L2 serves each weight line once a cluster; chosen in one build by
# MILES_EXT_KERNELS_PROBE_MULTICAST=C, unset or 0 = main's kernel). Compiled on the CPU machine
# (sm_90a: 30-32 registers, no spill). Prediction from call 7 (64 copies took half of the penalty
# off): C = 4-8 takes most of the FP32 penalty at T 800-4096. Bits of C = 2, 4, 8 against the same
# build unset (fwd_bits.py, FP32 weights), then C = 0 2 4 8 8 4 2 0 on rows.py, BF16 for reference.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree MC $D77/multicast_weights.patch || exit 1
build_matching /tmp/MC MC 16 'miles_rmsnorm_fwd__h2048$' || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,801x5120
(cd /tmp/MC && python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
 for c in 2 4 8; do
   MILES_EXT_KERNELS_PROBE_MULTICAST=$c python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -2 \
     | sed "s/^/C=$c /"
 done)
echo "bits $(( $(date +%s) - t0 )) s"
R=800x5120,1024x5120,1100x4096,4096x1536,4096x2048,4096x4096,1024x6144,1024x8192,16384x2048
for c in 0 2 4 8 8 4 2 0; do
  (cd /tmp/MC && MILES_EXT_KERNELS_PROBE_MULTICAST=$c timeout -s KILL 120 python3 $ROWS_PY fwd \
    plain fp32 $R 2>/dev/null | sed "s/^/C$c plain fp32 /") >> $OUT/rows10.txt
done
(cd /tmp/MC && timeout -s KILL 120 python3 $ROWS_PY fwd plain bf16 $R 2>/dev/null \
  | sed "s/^/C0 plain bf16 /") >> $OUT/rows10.txt
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows10.txt
echo "rows $(( $(date +%s) - t0 )) s"
