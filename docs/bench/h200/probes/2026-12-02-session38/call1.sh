#!/bin/bash
# Session 38 call 1: step 72's L2 evict_last row loads (working tree, B) against the same package
# with kKeepRows false (.device/nokeep, V) at the hidden sizes session 37 did not time (H 264-3072
# and past 8192), 16384 x 8192 as the control; B V V B, B/V < 1 means the policy is faster.
S34=docs/bench/h200/probes/2026-12-02-session34
V=nokeep MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x512,65536x1024,32768x2048,16384x3072,16384x8192,8192x12288,4096x16384;fwd residual bf16 16384x1024,16384x2048,8192x3072,4096x12288,4096x16384" \
  timeout -s KILL 420 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^nokeep "
