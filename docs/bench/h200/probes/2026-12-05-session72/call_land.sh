#!/bin/bash
# Session 72, prepared for the next device call (about 4 minutes on 16 cores): step 107 as it
# would land (grid_pace.patch: GridPace in the deterministic backward, one vector a thread; the
# workspace test at three shapes) in /tmp/N — every module built, the GPU suite; then N against
# main (M, the working tree) at 16384 x 2048 and at mid-size calls the H100 runs had not covered
# (T 2048-8192), A B B A.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
rm -rf /tmp/N && cp -r . /tmp/N && (cd /tmp/N \
  && git apply docs/bench/h200/probes/2026-12-05-session72/grid_pace.patch \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching . M 4 'miles_rmsnorm_bwd__h2048$' &
(cd /tmp/N && build_tree 12)
wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/N && gpu_suite)
abba land.txt bwd 2048x4096,4096x2048,4096x4096,8192x2048,16384x1536,16384x2048 "plain bf16" -- ". M" "/tmp/N N"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/land.txt
