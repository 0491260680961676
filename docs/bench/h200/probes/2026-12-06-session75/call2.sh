#!/bin/bash
# Session 75, call 2 (the same warm machine, call 1's builds and trees kept): M P P M at the paced
# shapes, with BF16 and FP32 weights.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ls /tmp/mek-cache | wc -l; ls -d /tmp/M /tmp/O
R=16384x4096,65536x4096,24576x4096,16384x8192,32768x2048
abba rows2.txt bwd $R "plain bf16" -- "/tmp/M M" ". P"
abba rows2.txt bwd 16384x4096,65536x2048 "plain fp32" -- "/tmp/M M" ". P"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows2.txt
