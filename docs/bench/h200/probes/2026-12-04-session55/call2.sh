#!/bin/bash
# Session 55 call 2: is step 44's split (a small batch's row over a cluster of 2-8 CTAs,
# split_row_default) still faster than one CTA a row, now that one CTA a row takes the fixed
# kernel (steps 45-83)? HEAD's forward modules, rows.py's forward in one build with
# MILES_EXT_KERNELS_SPLIT_ROWS unset (D: the measured choice) and "0" (one CTA a row), two
# passes D 0 0 D; then forced splits of 2 and 4 on a subset. Rows where D does not split are the
# noise control.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
S=1x4096,4x4096,16x4096,32x4096,1x5120,4x5120,16x5120,32x5120,1x6144,4x6144,16x6144,32x6144
S=$S,1x8192,4x8192,16x8192,32x8192,1x12288,4x12288,16x12288,32x12288,1x16384,4x16384,16x16384
S=$S,32x16384
split_run D "" $S; split_run O 0 $S; split_run O 0 $S; split_run D "" $S
echo "ab $(( $(date +%s) - t0 )) s"
T=1x6144,16x6144,1x8192,16x8192,1x16384,16x16384
split_run D "" $T; split_run F 4 $T; split_run T 2 $T
split_run T 2 $T; split_run F 4 $T; split_run D "" $T
echo "forced $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
