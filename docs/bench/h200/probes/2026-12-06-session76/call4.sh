#!/bin/bash
# Session 76, call 4: E = FP32 weights loaded with the row in the streaming loop-free kernel
# (early_weights.patch: LATE_WEIGHTS off; ptxas spills 32 bytes); M E E M of the FP32-weight
# forward; ncu of main's kernel at 1024 x 5120 with BF16 and FP32 weights and of E's with FP32.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
nvcc --version | tail -2
mkdir -p /tmp/mek-cache && cp -r .device/cache76/. /tmp/mek-cache/
patched_tree E $D76/early_weights.patch || exit 1
build_matching . M 8 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/E E 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
ls /tmp/mek-cache
R=4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,1024x6144,1024x8192,16384x2048,16384x8192
abba rows4.txt fwd $R "plain fp32" -- ". M" "/tmp/E E"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows4.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for run in ". M bf16" ". M fp32" "/tmp/E E fp32"; do
  set -- $run
  (cd $1 && timeout -s KILL 100 $NCU --kernel-name regex:forward --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats --section SourceCounters \
    python3 $D76/ncu_fwd.py 1024 5120 $3 > $OUT/ncu_$2_$3.txt 2>&1)
  echo "== $2 $3"; grep -E "^  [a-z_]*forward|Duration|Achieved Occupancy|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|DRAM Throughput|Issued Warp|No Eligible" $OUT/ncu_$2_$3.txt | head -12
done
