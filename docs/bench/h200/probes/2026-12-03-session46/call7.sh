#!/bin/bash
# Session 46, call 7: the landed sources (K: HEAD) against a035dbf (A: .device/A46) past T = 64,
# where the fixed kernels still serve small batches (up to 2^21 elements): rows.py A K K A.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A46 || exit 1
fwd_build /tmp/A46 A & fwd_build . K & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="128x2048,256x2048,1024x2048,256x4096,512x4096,128x6144,256x6144,128x8192,256x8192"
ab rows.txt fwd $S "residual bf16" "plain bf16" "plain fp32" -- \
  "/tmp/A46 A" ". K" ". K" "/tmp/A46 A"
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
python3 docs/bench/h200/probes/2026-12-03-session46/geomeans.py $OUT/table.txt
