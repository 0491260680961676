#!/bin/bash
# Session 76, call 2 (warm after call 1): S2 = S with the staged instances' shared-memory carveout
# set to its maximum (staged_carveout.patch); bits of S against M (the fixed fwd_bits.py); M S S2
# at four FP32 shapes; ncu of S's and M's kernels at 4096 x 2048 (occupancy, stalls).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
patched_tree S2 $D76/staged_carveout.patch || exit 1
build_matching /tmp/S2 S2 8 'miles_rmsnorm_fwd__h2048$'
[ -d /tmp/S ] || { patched_tree S $D76/staged_weights.patch && build_matching /tmp/S S 8 'miles_rmsnorm_fwd__h2048$'; }
echo "builds $(( $(date +%s) - t0 )) s"
B=4096x2048,1024x5120,1000x8192,3000x1536,20000x4096
python3 $D76/fwd_bits.py save /tmp/fb.pt $B | tail -1
(cd /tmp/S2 && python3 $D76/fwd_bits.py compare /tmp/fb.pt $B | tail -3)
R=4096x2048,1024x5120,1024x8192,16384x2048
ab rows2.txt fwd $R "plain fp32" -- ". M" "/tmp/S S" "/tmp/S2 S2"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows2.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for pair in ". M" "/tmp/S S" "/tmp/S2 S2"; do
  set -- $pair
  (cd $1 && timeout -s KILL 100 $NCU --kernel-name regex:forward --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    python3 $D76/ncu_fwd.py 4096 2048 fp32 > $OUT/ncu_$2.txt 2>&1)
  echo "== $2"; grep -E "Function Name|^  [a-z_]*forward|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Shared Memory Config|Dynamic Shared|Block Limit|Waves" $OUT/ncu_$2.txt | head -20
done
