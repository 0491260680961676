#!/bin/bash
# Session 51's next call (written, not run): warp_rows_tied.patch (call 4's warp-rows kernel with
# its weights loaded with the rows, IEEE rstd) built in /tmp/w5 from the patch, against HEAD (A)
# and torch.compile: bits, rows.py A/B (W1: one warp a CTA, W4: four, R2: four warps of 2 rows),
# then ours (W4) against torch.compile in one process.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-03-session51
command -v patch > /dev/null || { echo "no patch(1) here: apply the patch on the workstation into .device/w5"; exit 1; }
rm -rf /tmp/w5 && cp -r . /tmp/w5 && (cd /tmp/w5 && patch -p1 -s < $P/warp_rows_tied.patch \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
fwd_build . A 8 & fwd_build /tmp/w5 W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
B=$(pwd)/docs/bench/h200/probes/2026-12-03-session49/bits.py
export BITS_CALLS=1000x256,5001x256,20003x256,1000x512,5001x512,20003x512
python3 $B save /tmp/bits.pt 2>&1 | tail -1
(cd /tmp/w5 && MEK_PROBE_WR=1 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
(cd /tmp/w5 && MEK_PROBE_WR=4 MEK_PROBE_RPW=2 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
SH=1024x256,2048x256,4096x256,16384x256,65536x256,1024x512,2048x512,4096x512,16384x512,65536x512
F=("plain bf16" "plain fp32")
w() { (export MEK_PROBE_WR=$2 MEK_PROBE_RPW=$3; ab rows.txt fwd $SH "${F[@]}" -- "/tmp/w5 $1"); }
ab rows.txt fwd $SH "${F[@]}" -- ". A"; w W1 1 4; w W4 4 4; w R2 4 2
w R2 4 2; w W4 4 4; w W1 1 4; ab rows.txt fwd $SH "${F[@]}" -- ". A"
echo "rows $(( $(date +%s) - t0 )) s"
(cd /tmp/w5 && MEK_PROBE_WR=4 timeout -s KILL 90 python3 $P/inductor_dump.py \
  4096x256,16384x256,65536x256,16384x512 bf16 2>&1 | grep "^TIMES")
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
