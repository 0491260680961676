#!/bin/bash
# Session 51 call 2: Inductor's layout for H 256 and 512 (call 1: one-warp programs of 4 rows at
# 256, 2 at 512, up to 64 registers) as a probe of ours: .device/wr's forward_warp_rows_kernel
# (forward_rows_multi's ROWS rows a group, __launch_bounds__(1024, 1)) behind MEK_PROBE_WARP_ROWS,
# against HEAD (A), at 1, 2 and 4 groups a CTA, FP32 weights with the rows or late; bits first.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-03-session51
copy_tree wr
fwd_build . A 8 & fwd_build /tmp/wr W 8 & wait
echo "builds $(( $(date +%s) - t0 )) s"
export BITS_CALLS=1000x256,5000x256,20000x256,1000x512,5000x512,20000x512
python3 docs/bench/h200/probes/2026-12-03-session49/bits.py save /tmp/bits.pt 2>&1 | tail -1
(cd /tmp/wr && MEK_PROBE_WARP_ROWS=1 python3 $OLDPWD/docs/bench/h200/probes/2026-12-03-session49/bits.py check /tmp/bits.pt 2>&1 | tail -1)
(cd /tmp/wr && MEK_PROBE_WARP_ROWS=1 MEK_PROBE_LATE=1 MEK_PROBE_GROUPS=4 python3 $OLDPWD/docs/bench/h200/probes/2026-12-03-session49/bits.py check /tmp/bits.pt 2>&1 | tail -1)
echo "bits $(( $(date +%s) - t0 )) s"
SH=1024x256,2048x256,4096x256,16384x256,65536x256,1024x512,2048x512,4096x512,16384x512,65536x512
run() {  # label groups late
  (export MEK_PROBE_WARP_ROWS=1 MEK_PROBE_GROUPS=$2 MEK_PROBE_LATE=$3
   ab rows.txt fwd $SH "plain bf16" "plain fp32" -- "/tmp/wr $1")
}
ab rows.txt fwd $SH "plain bf16" "plain fp32" -- ". A"
run G1 1 0; run G2 2 0; run G4 4 0
echo "half $(( $(date +%s) - t0 )) s"
run G4 4 0; run G2 2 0; run G1 1 0
ab rows.txt fwd $SH "plain bf16" "plain fp32" -- ". A"
run L1 1 1
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
