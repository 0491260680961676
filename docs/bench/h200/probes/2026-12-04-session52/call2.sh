#!/bin/bash
# Session 52 call 2: ncu (running clock) of ours (A: HEAD, F4: .device/w6 at MEK_PROBE_WR=4) and
# torch.compile's forward at 16384 x 256 and 16384 x 512: duration, instructions, issue slots,
# stall cycles, DRAM. Reuses call 1's trees if the machine kept them.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session52
[ -d /tmp/w6 ] || { copy_tree w6; fwd_build . A 8 & fwd_build /tmp/w6 F 8 & wait; }
echo "ready $(( $(date +%s) - t0 )) s"
NCU="timeout -s KILL 150 /usr/local/cuda/bin/ncu --clock-control none --csv --page details
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats
  --section InstructionStats --kernel-name regex:forward|triton"
for s in "16384 256 bf16" "16384 512 bf16" "16384 256 fp32"; do
  k=$(echo $s | tr ' ' _)
  $NCU python3 $Q/ncu_pair.py $s both > $OUT/ncu_A_$k.csv 2> /dev/null
  (cd /tmp/w6 && MEK_PROBE_WR=4 $NCU python3 $Q/ncu_pair.py $s ours > $OUT/ncu_F4_$k.csv \
    2> /dev/null)
  python3 $Q/ncu_last.py "A/compile $k" $OUT/ncu_A_$k.csv
  python3 $Q/ncu_last.py "F4 $k" $OUT/ncu_F4_$k.csv
  echo "ncu $k $(( $(date +%s) - t0 )) s"
done
