#!/bin/bash
# Session 46, call 2: the fixed forward kernels with BF16 widened by moving bits and the row sum's
# second level as a local tree (step 81), in the harness's engine (session 41's rows.py: CUDA
# graphs, the harness's L2 flush subtracted). A: HEAD a035dbf (.device/A46); N: the working tree.
# Forward at T 1, 16, 64 and H 2048-8192: plain and residual BF16 weights, plain FP32 weights;
# A N N A; then the T = 64 residual rows A N N A N A. Run from the repository root, .whl and
# .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
AB=docs/bench/h200/probes/2026-12-03-session45/ab_table.py
copy_tree A46 || exit 1
fwd_build /tmp/A46 A & fwd_build . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="1x2048,16x2048,64x2048,1x4096,16x4096,64x4096,1x5120,16x5120,64x5120,1x6144,16x6144,64x6144"
S="$S,1x8192,16x8192,64x8192"
ab rows.txt fwd $S "plain bf16" "residual bf16" "plain fp32" -- \
  "/tmp/A46 A" ". N" ". N" "/tmp/A46 A"
echo "rows $(( $(date +%s) - t0 )) s"
ab rows64.txt fwd 64x2048,64x4096,64x5120,64x6144,64x8192 "residual bf16" -- \
  "/tmp/A46 A" ". N" ". N" "/tmp/A46 A" ". N" "/tmp/A46 A"
echo "rows64 $(( $(date +%s) - t0 )) s"
python3 $AB $OUT/rows.txt > $OUT/table.txt
python3 $AB $OUT/rows64.txt | tee $OUT/table64.txt
python3 docs/bench/h200/probes/2026-12-03-session46/geomeans.py $OUT/table.txt
