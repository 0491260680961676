#!/bin/bash
# Session 51 call 3 (call 2's one-warp CTAs of 4 rows were 1-43% slower): K, the fixed kernel's
# several-rows plain form at 32 registers (2048 threads an SM; ptxas: no spill at H 256, 8-56
# bytes at 512), MEK_PROBE_FIXED_ALL=1 taking it past the spread window as well (KP); R, a
# diagnostic with an approximate rstd (rsqrtf, other bits): what the IEEE rstd costs.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree k; copy_tree r
fwd_build . A 6 & fwd_build /tmp/k K 5 & fwd_build /tmp/r R 5 & wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=1024x256,2048x256,4096x256,16384x256,65536x256,1024x512,2048x512,4096x512,16384x512,65536x512
F=("plain bf16" "plain fp32")
kp() { (export MEK_PROBE_FIXED_ALL=1; ab rows.txt fwd $SH "${F[@]}" -- "/tmp/k KP"); }
ab rows.txt fwd $SH "${F[@]}" -- ". A" "/tmp/k K"; kp
ab rows.txt fwd $SH "${F[@]}" -- "/tmp/r R"
echo "half $(( $(date +%s) - t0 )) s"
ab rows.txt fwd $SH "${F[@]}" -- "/tmp/r R"; kp
ab rows.txt fwd $SH "${F[@]}" -- "/tmp/k K" ". A"
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
