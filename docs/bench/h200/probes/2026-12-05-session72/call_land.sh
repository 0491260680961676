#!/bin/bash
# Session 72, prepared for the next device call (about 5 minutes on 16 cores, best on an H200):
# N = main + grid_pace.patch (step 107: GridPace), NV = N + fixed_hidden.patch (step 108: the
# row loop at H 2048 with the row width and hidden size as constants). Every module of NV built
# and the GPU suite run on it; dx and dw bits of N and NV against main's (M, the working tree);
# then M N NV NV N M at 16384 x 2048 and 65536 x 2048, and M N N M at mid-size calls the H100 runs
# had not covered (T 2048-8192, where a CTA runs few iterations).
# `call_land.sh short` (session 73, about 4 minutes): NV only, for a call with little device time
# left: its build and GPU suite, its bits, and M NV NV M at 16384 x 2048 and 65536 x 2048.
MODE=${1:-full}
VARIANTS="N NV"
[ "$MODE" = short ] && VARIANTS=NV
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session72
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
for t in $VARIANTS; do
  patched_tree $t $P/grid_pace.patch $([ $t = N ] || echo $P/fixed_hidden.patch) || exit 1
done
build_matching . M 2 'miles_rmsnorm_bwd__h2048$' &
[ "$MODE" = short ] || build_matching /tmp/N N 2 'miles_rmsnorm_bwd__h2048$' &
(cd /tmp/NV && build_tree 12)
wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/NV && gpu_suite)
SH=16384x2048,4096x2048,65536x2048,1000x2048
python3 $Q/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
for v in $VARIANTS; do (cd /tmp/$v && python3 $Q/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/$v /"); done
echo "bits $(( $(date +%s) - t0 )) s"
L=16384x2048,65536x2048
if [ "$MODE" = short ]; then
  abba land.txt bwd $L "plain bf16" -- ". M" "/tmp/NV NV"
else
  ab land.txt bwd $L "plain bf16" -- ". M" "/tmp/N N" "/tmp/NV NV" "/tmp/NV NV" "/tmp/N N" ". M"
  ab land.txt bwd 16384x2048 "plain fp32" "residual bf16" -- ". M" "/tmp/N N" "/tmp/NV NV"
  abba land.txt bwd 2048x4096,4096x2048,4096x4096,8192x2048,16384x1536 "plain bf16" -- ". M" "/tmp/N N"
fi
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/land.txt
