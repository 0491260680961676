#!/bin/bash
# Session 73: session 72's call_land.sh cut to what landing needs, for a call with little device
# time left (about 4 minutes on 16 cores). NV = main + grid_pace.patch + fixed_hidden.patch (steps
# 107-108). Every module of NV built and the GPU suite run on it; dx and dw bits of NV against
# main's (M, the working tree); then M NV NV M at 16384 x 2048 and 65536 x 2048.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
P=$(pwd)/docs/bench/h200/probes/2026-12-05-session72
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
rm -rf /tmp/NV && cp -r . /tmp/NV && (cd /tmp/NV && git apply $P/grid_pace.patch \
  && git apply $P/fixed_hidden.patch && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching . M 2 'miles_rmsnorm_bwd__h2048$' &
(cd /tmp/NV && build_tree 14)
wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/NV && gpu_suite)
SH=16384x2048,4096x2048,65536x2048,1000x2048
python3 $Q/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
(cd /tmp/NV && python3 $Q/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/NV /")
echo "bits $(( $(date +%s) - t0 )) s"
ab land.txt bwd 16384x2048,65536x2048 "plain bf16" -- ". M" "/tmp/NV NV" "/tmp/NV NV" ". M"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/land.txt
