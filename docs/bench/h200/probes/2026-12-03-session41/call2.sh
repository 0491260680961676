#!/bin/bash
# Session 41 call 2: the ring at 32-40 registers (MILES_PROBE_RING_D 22 / 32: 2 / 3 stages, eight
# 256-thread CTAs an SM; 46: 4 stages, six), bits, times; ncu of the launcher's kernel at 65536 x 256.
set -u
source "$(dirname "$0")/variant.sh" ring
timeout -s KILL 120 python3 $D/ring_check.py save /tmp/ref.pt 2>&1 | tail -2
for d in 22 32 46; do
  MILES_PROBE_RING_D=$d timeout -s KILL 120 python3 $D/ring_check.py check /tmp/ref.pt 2>&1 | tail -2
done
for v in base 22 32 46 base; do
  if [ $v = base ]; then e="X=0"; else e="MILES_PROBE_RING_D=$v"; fi
  echo "$v plain-bf16 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd plain bf16 65536x256,16384x256,65536x128,65536x512 2>&1 | tail -1)"
  echo "$v phs-bf16 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd phs bf16 16384x256 2>&1 | tail -1)"
  echo "$v phc-bf16 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd phc bf16 65536x256 2>&1 | tail -1)"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
if [ -n "$NCU" ]; then
  timeout -s KILL 150 $NCU --kernel-name regex:forward --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    python3 $D/ncu_fwd.py 65536 256 > $OUT/ncu_base_65536x256.txt 2>&1
  grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots|Stall|Warp Cycles Per Issued|Block Limit" $OUT/ncu_base_65536x256.txt | head -30
fi
