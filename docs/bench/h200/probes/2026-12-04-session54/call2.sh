#!/bin/bash
# Session 54 call 2: step 89, the one-row backward over half vectors (two threads a vector,
# backward_one_row_halves_kernel), against the one-vector kernel in the same build
# (MILES_EXT_KERNELS_ONE_ROW_HALVES=0): dx and dw bits at T 1-64, the GPU suite, rows.py A/B at
# T = 1 (two passes) and T 16-64 (unchanged code), torch.compile beside the new kernel (bwd_t1.py).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
build_tree 14
echo "builds $(( $(date +%s) - t0 )) s"
export BWD_BITS_CALLS=1x256,1x264,1x512,1x896,1x1024,1x1536,1x2048,1x2880,1x3072,1x4096,16x1024,64x2048
MILES_EXT_KERNELS_ONE_ROW_HALVES=0 python3 $Q/bwd_bits.py save /tmp/bwd_bits.pt 2>&1 | tail -1
python3 $Q/bwd_bits.py check /tmp/bwd_bits.pt 2>&1 | tail -1
gpu_suite
rows() {  # label halves shapes family weight
  (MILES_EXT_KERNELS_ONE_ROW_HALVES=$2 timeout -s KILL 120 python3 $ROWS_PY bwd $4 $5 $3 \
    2>/dev/null | sed "s/^/$1 $4 $5 /") >> $OUT/rows.txt
}
T1=1x256,1x512,1x1024,1x1536,1x2048,1x2880,1x3072,1x4096
for pass in 1 2; do
  for fam in "plain fp32" "plain bf16" "residual bf16"; do
    rows A 0 $T1 $fam; rows B 1 $T1 $fam
  done
done
rows A 0 16x1024,64x1024 plain fp32; rows B 1 16x1024,64x1024 plain fp32
echo "ab $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 $Q/bwd_t1.py 256,512,1024,1536,2048,3072,4096 fp32 \
  > $OUT/bwd_t1_fp32.txt 2>&1 || tail -5 $OUT/bwd_t1_fp32.txt
echo "t1 $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
grep "^|" $OUT/bwd_t1_fp32.txt
