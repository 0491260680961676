#!/bin/bash
# Session 51 call 4 (call 3: neither the IEEE rstd nor 32 registers for the fixed kernel's rows
# is the gap): .device/w4's forward_fixed_warp_rows_kernel, Inductor's layout at a fixed size
# (RPW rows a warp, the weights loaded once, up to 64 registers, no per-row address division),
# behind MEK_PROBE_WR=<warps a CTA> (MEK_PROBE_RPW 4 or 2 at H 256; 2 at 512); bits first.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree w4
fwd_build . A 8 & fwd_build /tmp/w4 W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
B=$(pwd)/docs/bench/h200/probes/2026-12-03-session49/bits.py
export BITS_CALLS=1000x256,5001x256,20003x256,1000x512,5001x512,20003x512
python3 $B save /tmp/bits.pt 2>&1 | tail -1
(cd /tmp/w4 && MEK_PROBE_WR=1 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
(cd /tmp/w4 && MEK_PROBE_WR=4 MEK_PROBE_RPW=2 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
echo "bits $(( $(date +%s) - t0 )) s"
SH=1024x256,2048x256,4096x256,16384x256,65536x256,1024x512,2048x512,4096x512,16384x512,65536x512
F=("plain bf16" "plain fp32")
w() { (export MEK_PROBE_WR=$2 MEK_PROBE_RPW=$3; ab rows.txt fwd $SH "${F[@]}" -- "/tmp/w4 $1"); }
ab rows.txt fwd $SH "${F[@]}" -- ". A"; w W1 1 4; w W4 4 4; w R2 4 2
echo "half $(( $(date +%s) - t0 )) s"
w R2 4 2; w W4 4 4; w W1 1 4; ab rows.txt fwd $SH "${F[@]}" -- ". A"
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
