#!/bin/bash
# Session 52 call 4: the working tree (N: forward_fixed_warp_rows_kernel routed past the spread
# window at H 256 and 512, step 87) against HEAD's kernels (A, .device/A): every module built,
# the GPU suite, bits, rows.py A/B, then N against torch.compile in one process.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-03-session51
copy_tree A
build_tree 12 & fwd_build /tmp/A A 4 & wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
B=$(pwd)/docs/bench/h200/probes/2026-12-03-session49/bits.py
export BITS_CALLS=1000x256,5001x256,20003x256,1000x512,5001x512,20003x512
(cd /tmp/A && python3 $B save /tmp/bits.pt 2>&1 | tail -1)
python3 $B check /tmp/bits.pt 2>&1 | tail -1
echo "bits $(( $(date +%s) - t0 )) s"
SH=3073x256,4096x256,16384x256,65536x256,3073x512,4096x512,16384x512,65536x512
FAM=("plain bf16" "plain fp32")
ab rows.txt fwd $SH "${FAM[@]}" -- "/tmp/A A" ". N"
ab rows.txt fwd $SH "${FAM[@]}" -- ". N" "/tmp/A A"
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
for w in bf16 fp32; do
  timeout -s KILL 70 python3 $P/inductor_dump.py 4096x256,16384x256,65536x256,4096x512,16384x512,65536x512 \
    $w 2>&1 | grep "^TIMES" | tee -a $OUT/times.txt
done
echo "times $(( $(date +%s) - t0 )) s"
cat $OUT/table.txt
