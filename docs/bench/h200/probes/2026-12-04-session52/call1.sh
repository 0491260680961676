#!/bin/bash
# Session 52 call 1: session 51's next.sh with the patches applied on the workstation (.device/w5:
# warp_rows_tied.patch, .device/w6: warp_rows_fast_rstd.patch, .device/cl: coherent_loads.patch,
# all against 836b0ce's kernels = HEAD's). rstd_check over rstd_fast's whole range, bits against
# HEAD (A), rows.py A/B (W4: w5 at 4 warps a CTA, F4: w6 at 4, C: cl), then W4 and F4 against
# torch.compile in one process.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-03-session51
for t in w5 w6 cl; do copy_tree $t; done
nvcc -std=c++17 -O3 -arch=sm_90a -I/tmp/w6/$PKG/include $P/rstd_check.cu -o /tmp/rstd_check \
  && /tmp/rstd_check
fwd_build . A 4 & fwd_build /tmp/w5 W 4 & fwd_build /tmp/w6 F 4 & fwd_build /tmp/cl C 4 & wait
echo "builds $(( $(date +%s) - t0 )) s"
B=$(pwd)/docs/bench/h200/probes/2026-12-03-session49/bits.py
export BITS_CALLS=1000x256,5001x256,20003x256,1000x512,5001x512,20003x512
python3 $B save /tmp/bits.pt 2>&1 | tail -1
for t in w5 w6; do
  (cd /tmp/$t && MEK_PROBE_WR=4 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
  (cd /tmp/$t && MEK_PROBE_WR=4 MEK_PROBE_RPW=2 python3 $B check /tmp/bits.pt 2>&1 | tail -1)
done
(cd /tmp/cl && python3 $B check /tmp/bits.pt 2>&1 | tail -1)
echo "bits $(( $(date +%s) - t0 )) s"
SH=1024x256,4096x256,16384x256,65536x256,1024x512,4096x512,16384x512,65536x512
FAM=("plain bf16" "plain fp32")
v() { (export MEK_PROBE_WR=$3; ab rows.txt fwd $SH "${FAM[@]}" -- "/tmp/$1 $2"); }
ab rows.txt fwd $SH "${FAM[@]}" -- ". A"; v w5 W4 4; v w6 F4 4; v cl C 0
v cl C 0; v w6 F4 4; v w5 W4 4; ab rows.txt fwd $SH "${FAM[@]}" -- ". A"
echo "rows $(( $(date +%s) - t0 )) s"
for t in w5 w6; do
  (cd /tmp/$t && MEK_PROBE_WR=4 timeout -s KILL 60 python3 $P/inductor_dump.py \
    4096x256,16384x256,65536x256,16384x512 bf16 2>&1 | grep "^TIMES" | sed "s/^/$t /") \
    | tee -a $OUT/times.txt
done
echo "times $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
