#!/bin/bash
# Session 70, call 2 (about 6 minutes): step 104 (N, the working tree: warp_row_rstd, call 1's S1
# kept to the kernels whose rows take at most one warp) against main's step 103 (H, the package
# from `git archive HEAD` in .device/H). rstd_check.cu again, with one_mufu's differing floats by
# mantissa and exponent parity; every module of N; fwd_twice.py H N N H (ours), torch.compile once
# on N; the GPU suite on N.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session70
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
nvcc -arch=sm_90a -O3 -std=c++17 $P/rstd_check.cu -o /tmp/rstd_check && /tmp/rstd_check \
  > $OUT/rstd_check.txt
fwd_step_builds
fwd_twice_run . N plain 1x256,16x256,1x512,16x512 compile
fwd_step_twice 1x256,16x256,1x512,16x512,64x512,1x2048,16x2048,16x4096,1024x512 1x256,16x512
gpu_suite
cat $OUT/rstd_check.txt
twice_table
