#!/bin/bash
# Session 70, call 4 (about 5 minutes): step 105 (N, the working tree: rstd_fast's reciprocal
# seeded with rsqrt.approx's y, no rcp.approx; rstd_fast_range rejects the four floats every two
# binades that call 2's rstd_check.cu found it rounding the other way) against step 104 (H, the
# package from `git archive HEAD` in .device/H): every module of N; fwd_twice.py H N N H (ours;
# the one-row, 8-rows-a-CTA and warp-rows kernels); the GPU suite on N, whose
# test_rstd_fast_matches_the_ieee_rstd_on_every_float_of_its_range checks the new sequence on
# every float of the range.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
fwd_step_builds
fwd_step_twice 1x256,16x256,1x512,16x512,64x512,256x256,1024x512,8192x256,4096x512 1x256,16x512
gpu_suite
grep -E "rstd_fast|failed|passed" $OUT/gpu_suite.log | tail -3
twice_table
