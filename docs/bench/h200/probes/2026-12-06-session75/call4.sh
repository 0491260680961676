#!/bin/bash
# Session 75, call 4 (warm, call 3's P2 kept): P P2 P2 P at chunks of 17 and 18 iterations
# (17500 and 18500 x 2048, 4300 and 4700 x 8192) and again at 19.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ls -d /tmp/P2 > /dev/null || exit 1
R=17500x2048,18500x2048,4300x8192,4700x8192,20000x2048,5000x8192
abba rows4.txt bwd $R "plain bf16" -- ". P" "/tmp/P2 P2"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows4.txt
