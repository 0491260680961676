#!/bin/bash
# Session 41 call 3: two rows' rstd in one instruction stream (MILES_PROBE_RSEL=1, .device/rsel),
# bits, times; ncu of both at 65536 x 256 without clock control (instructions, issue, DRAM).
set -u
source "$(dirname "$0")/variant.sh" rsel
timeout -s KILL 120 python3 $D/ring_check.py save /tmp/ref.pt 2>&1 | tail -1
MILES_PROBE_RSEL=1 timeout -s KILL 120 python3 $D/ring_check.py check /tmp/ref.pt 2>&1 | tail -1
for v in base rsel rsel base; do
  if [ $v = base ]; then e="X=0"; else e="MILES_PROBE_RSEL=1"; fi
  echo "$v plain-bf16 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd plain bf16 65536x256,16384x256,65536x192 2>&1 | tail -1)"
  echo "$v plain-fp32 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd plain fp32 65536x256 2>&1 | tail -1)"
  echo "$v phs/phc-bf16 $(env $e timeout -s KILL 120 python3 $D/rows.py fwd phs bf16 16384x256 2>&1 | tail -1) $(env $e timeout -s KILL 120 python3 $D/rows.py fwd phc bf16 65536x256 2>&1 | tail -1)"
done
for v in base rsel; do
  if [ $v = base ]; then e="X=0"; else e="MILES_PROBE_RSEL=1"; fi
  env $e timeout -s KILL 100 /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:forward \
    --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --metrics smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active \
    python3 $D/ncu_fwd.py 65536 256 > $OUT/ncu_${v}_noclock.txt 2>&1
  echo "ncu $v:"; grep -E "DRAM Throughput|Duration|SM Frequency|Compute \(SM\)|inst_executed|issue_active|Warp Cycles Per Issued" $OUT/ncu_${v}_noclock.txt
done
