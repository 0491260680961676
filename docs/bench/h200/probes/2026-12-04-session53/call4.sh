#!/bin/bash
# Session 53 call 4: step 88 as kept against HEAD's kernels (.device/head), the checks of call 3:
# call 3's sources (rstd tied to the row sum, the pow2 coefficient, the one-warp width at compile
# time) with each row's sum taken on every thread and selected, so that dx reuses its widened g, x
# and g * w. Bits at T 1-64, the GPU suite, rows.py A/B, torch.compile beside it at T = 1.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
copy_tree head
small /tmp/head A &
build_tree 14
wait
echo "builds $(( $(date +%s) - t0 )) s"
export BWD_BITS_CALLS=1x256,1x200,1x512,1x1024,1x1536,1x2048,1x3072,1x4096,1x8192,16x256,16x1024,16x4096,64x256,64x2048,64x6144
(cd /tmp/head && python3 $Q/bwd_bits.py save /tmp/bwd_bits.pt) 2>&1 | tail -1
python3 $Q/bwd_bits.py check /tmp/bwd_bits.pt 2>&1 | tail -1
gpu_suite
T1=1x256,1x512,1x1024,1x1536,1x2048,1x3072,1x4096
T16=16x256,16x1024,16x4096,64x256,64x1024,64x4096
for pass in 1 2; do
  ab rows.txt bwd $T1,$T16 "plain fp32" "plain bf16" -- "/tmp/head A" ". B"
done
ab rows.txt bwd 64x256 "phs bf16" "phc bf16" "residual bf16" -- "/tmp/head A" ". B" "/tmp/head A" ". B"
echo "ab $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 $Q/bwd_t1.py 256,512,1024,1536,2048,3072,4096 fp32 \
  > $OUT/bwd_t1_fp32.txt 2>&1 || tail -5 $OUT/bwd_t1_fp32.txt
echo "t1 $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
grep "^|" $OUT/bwd_t1_fp32.txt
