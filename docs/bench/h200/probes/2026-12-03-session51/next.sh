#!/bin/bash
# Session 51's next call (written, not run). Two variants built on the device from their patches
# (against 836b0ce's kernels): /tmp/w5 (warp_rows_tied.patch: call 4's warp-rows kernel with its
# weights loaded with the rows, IEEE rstd as row_rstd) and /tmp/w6 (warp_rows_fast_rstd.patch: the
# same with the rows' rstds in one branch-free block, rstd_fast). First rstd_check.cu over every
# float of rstd_fast's range, then bits against HEAD (A), rows.py A/B (W: w5, F: w6; 1 or 4 warps
# a CTA), then W4 and F4 against torch.compile in one process.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-03-session51
command -v patch > /dev/null || { echo "no patch(1) here: apply the patches on the workstation"; exit 1; }
for v in w5:warp_rows_tied w6:warp_rows_fast_rstd; do
  rm -rf /tmp/${v%%:*} && cp -r . /tmp/${v%%:*} && (cd /tmp/${v%%:*} && patch -p1 -s \
    < $P/${v##*:}.patch && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
done
nvcc -std=c++17 -O3 -arch=sm_90a -I/tmp/w6/$PKG/include $P/rstd_check.cu -o /tmp/rstd_check \
  && /tmp/rstd_check
fwd_build . A 6 & fwd_build /tmp/w5 W 5 & fwd_build /tmp/w6 F 5 & wait
echo "builds $(( $(date +%s) - t0 )) s"
B=$(pwd)/docs/bench/h200/probes/2026-12-03-session49/bits.py
export BITS_CALLS=1000x256,5001x256,20003x256,1000x512,5001x512,20003x512
python3 $B save /tmp/bits.pt 2>&1 | tail -1
for t in w5 w6; do
  (cd /tmp/$t && MEK_PROBE_WR=1 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
  (cd /tmp/$t && MEK_PROBE_WR=4 MEK_PROBE_RPW=2 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
done
echo "bits $(( $(date +%s) - t0 )) s"
SH=1024x256,2048x256,4096x256,16384x256,65536x256,1024x512,2048x512,4096x512,16384x512,65536x512
FAM=("plain bf16" "plain fp32")
v() { (export MEK_PROBE_WR=$3; ab rows.txt fwd $SH "${FAM[@]}" -- "/tmp/$1 $2"); }
ab rows.txt fwd $SH "${FAM[@]}" -- ". A"; v w5 W1 1; v w5 W4 4; v w6 F1 1; v w6 F4 4
v w6 F4 4; v w6 F1 1; v w5 W4 4; v w5 W1 1; ab rows.txt fwd $SH "${FAM[@]}" -- ". A"
echo "rows $(( $(date +%s) - t0 )) s"
for t in w5 w6; do
  (cd /tmp/$t && MEK_PROBE_WR=4 timeout -s KILL 60 python3 $P/inductor_dump.py \
    4096x256,16384x256,65536x256,16384x512 bf16 2>&1 | grep "^TIMES" | sed "s/^/$t /")
done
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
