#!/bin/bash
# Session 39 call 2: does the evict_last policy's gain follow the call's size rather than its
# hidden size? .device/kall: rkeep plus forward_keep_rows always true (every kKeepRows streaming
# call and the ring take the policy) against the working tree (B), B V V B, at large row counts
# where B has no policy. B/V > 1: the policy is faster.
S34=docs/bench/h200/probes/2026-12-02-session34
V=kall MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x1024,65536x2048,65536x3072,65536x5120,65536x7168,16384x7168,16384x16384,32768x16384;fwd residual bf16 65536x1024,65536x2048,32768x3072" \
  timeout -s KILL 480 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^kall "
