#!/bin/bash
# Session 58 call 2: the row partition as blocks of 2^k rows dealt to the chunks in turn
# (.device/rowblock, MEK_PROBE_ROW_BLOCK: -1 contiguous chunks as main, 0 call 1's strided rows,
# 1-3 blocks of 2-8 rows), one build: bits and budget checks, then rows.py's plain BF16 backward
# in every mode (-1 0 1 2 3 3 2 1 0 -1).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-04-session58
source $P/modes.sh
overlay_tree rowblock
bwd_build /tmp/rowblock R
echo "builds $(( $(date +%s) - t0 )) s"
cd /tmp/rowblock
timeout -s KILL 150 python3 $P/bits_probe.py 16384x2048,4096x4096,1000x2048,16384x8192 -1,0,2 \
  2>&1 | tee $OUT/bits.txt | grep -E "FAIL|failures"
echo "bits $(( $(date +%s) - t0 )) s"
SH=16384x2048,16384x4096,65536x2048,65536x4096,16384x8192,4096x4096,1024x4096,4096x2048
SH=$SH,16384x1536,16384x6144,65536x8192
modes plain.txt plain bf16 $SH -1 0 1 2 3 3 2 1 0 -1
echo "modes $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/plain.txt
