#!/bin/bash
# Session 34, call 2: the shared loop-free row end (working tree) against HEAD (vhead) on the
# residual form with FP32 weights at H 520-1536, where ptxas moved registers in 7 kernels.
V=vhead RUNS="fwd residual fp32 4096x640,4096x1024,4096x1536,16384x640,16384x1024,16384x1536,65536x1024;fwd plain fp32 4096x1024,16384x1536" \
  bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | tee $OUT/call2.txt
