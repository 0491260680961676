#!/bin/bash
# Session 65 call 1 (prepared; not run: no device was lent in session 65). Self-contained, about
# 4 minutes; independent of session 63's calls (main's kernels only). The deterministic backward
# with its grid forced to what GPUs with fewer SMs keep co-resident (grid_waves.py): one CTA an
# SM at H 2048 / 4096 from 16384 rows and at H >= 5120 (132 chunks: grids 132, 114, 108, 78), two
# CTAs an SM at the other H <= 4096 (264 chunks: 264, 228, 216, 156); the launcher clamps a
# forced grid to what the H200 keeps resident, and the output names the grid each launch used.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session65
build_matching . A 16 'miles_rmsnorm_bwd__h(1536|2048|3072|4096|6144)(_|$)' || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
GRIDS=none,264,228,216,156,132,114,108,78
timeout -s KILL 420 python3 $P/grid_waves.py \
  16384x2048,65536x4096,16384x6144,65536x1536,16384x3072,4096x4096 $GRIDS \
  2>&1 | grep -v -i warn | tee $OUT/grid_waves.txt
echo "done $(( $(date +%s) - t0 )) s"
