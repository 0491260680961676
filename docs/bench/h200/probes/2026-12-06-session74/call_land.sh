#!/bin/bash
# Session 74, one device call (about 5 minutes on 16 cores): L = main + land.patch (steps 107-108
# as landed: session 72's grid_pace.patch and fixed_hidden.patch, pacing narrowed to one CTA an
# SM, plain rows and chunks of 16 or more iterations; the KEEP test reading the template's sixth
# argument). Every module of L built and the GPU suite run on it; dx and dw bits of L against
# main's (M, the working tree); M L L M at 16384 and 65536 x 2048; FP32 weights and the residual
# form at 16384 x 2048; M L L M where session 74's first call saw pacing 2-7% slower (two CTAs an
# SM, 4-16 iterations) and at the paced H 4096 and 8192 shapes.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-06-session74
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
patched_tree L $P/land.patch || exit 1
land_check L 'miles_rmsnorm_bwd__h(1536|2048|4096|8192)$' \
  16384x2048,4096x2048,65536x2048,1000x2048,4300x8192,16384x8192,16384x4096
abba land.txt bwd 16384x2048,65536x2048 "plain bf16" -- ". M" "/tmp/L L"
ab land.txt bwd 16384x2048 "plain fp32" "residual bf16" -- ". M" "/tmp/L L"
abba land.txt bwd 2048x4096,4096x2048,8192x2048,16384x1536,16384x4096,4096x8192,16384x8192 \
  "plain bf16" -- ". M" "/tmp/L L"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/land.txt
