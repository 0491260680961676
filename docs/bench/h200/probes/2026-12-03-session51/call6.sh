#!/bin/bash
# Session 51 call 6: call 4's warp-rows kernel with an approximate rstd (rsqrtf; other bits, a
# diagnostic): does Inductor's layout in our code reach Inductor's time once the IEEE rstd (8
# slow-path calls a warp of 4 rows in its SASS) is gone? Ours (MEK_PROBE_WR) against torch.compile
# in one process (inductor_dump.py's timing).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree w4r
fwd_build /tmp/w4r W 16
echo "builds $(( $(date +%s) - t0 )) s"
for wr in 1 4; do
  (cd /tmp/w4r && MEK_PROBE_WR=$wr timeout -s KILL 60 python3 \
    $OLDPWD/docs/bench/h200/probes/2026-12-03-session51/inductor_dump.py \
    4096x256,16384x256,65536x256 bf16 2>&1 | grep "^TIMES" | sed "s/^/WR$wr /")
  echo "WR$wr $(( $(date +%s) - t0 )) s"
done
