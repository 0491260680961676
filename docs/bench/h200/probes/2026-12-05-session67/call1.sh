#!/bin/bash
# Session 67 call 1 (about 7-8 minutes on a cold H200 / H100): the GPU suite on main with
# balanced_waves.patch applied (step 100: the deterministic backward's cooperative grid takes
# the fewest CTAs that keep the chunks' waves where one CTA fills an SM and the chunks outnumber
# the resident CTAs; on a 132-SM GPU it launches what main launches, so the suite covers main's
# session-66 changes too), then session 65's grid_waves.py at the 132-chunk shapes with the grid
# forced to what 114-, 108-, 78- and 46-SM GPUs run today and to what the patch runs there
# (66 CTAs of two chunks; 44 of three).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
git apply docs/bench/h200/probes/2026-12-05-session67/balanced_waves.patch || exit 1
git log --oneline -1
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
grep -E "passed|failed" $OUT/gpu_suite.log | tail -1
timeout -s KILL 150 python3 docs/bench/h200/probes/2026-12-05-session65/grid_waves.py \
  16384x2048,65536x4096,16384x6144 none,114,108,78,66,46,44 2>&1 | grep -v -i warn \
  | tee $OUT/grid67.txt
echo "waves $(( $(date +%s) - t0 )) s"
