#!/bin/bash
# Session 74, call 3 (about 4 minutes): G = main + rows_gate.patch (pacing from 16384 rows in place
# of 16 iterations a chunk: call 2 measured 4096 x 8192, paced at 16 iterations, 1.2% slower).
# Every module of G built and the GPU suite run on it; dx and dw bits of G against main's (M, the
# working tree); M G G M at the peer grid's one-CTA-an-SM shapes below 16384 rows (paced on main,
# not in G), at two 16384-row shapes (paced in both) and at 2048 and 4096 x 4096 (paced in neither).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-06-session74
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
patched_tree G $P/rows_gate.patch || exit 1
land_check G 'miles_rmsnorm_bwd__h(2048|4096|5120|6144|8192)$' 4096x8192,16400x8192,4096x5120,16384x2048
abba gate.txt bwd 4096x5120,4096x6144,4096x8192,8192x8192,16384x2048,16384x8192,2048x4096,4096x4096 \
  "plain bf16" -- ". M" "/tmp/G G"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/gate.txt
