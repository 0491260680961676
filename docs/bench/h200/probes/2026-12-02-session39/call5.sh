#!/bin/bash
# Session 39 call 5: the deterministic backward's row copies (issue_rows' cp.async of g and x)
# with an L2 evict_last policy (cp_async16_keep; .device/bkeep: 55accd4's package so changed)
# against the working tree (B), B V V B, at the large calls session 38's call 5 left out.
# B/V > 1: the policy is faster.
S34=docs/bench/h200/probes/2026-12-02-session34
V=bkeep MODULES=miles_rmsnorm_bwd RUNS="bwd plain bf16 65536x2048,32768x4096,65536x8192,32768x8192,32768x12288;bwd residual bf16 65536x2048,65536x4096" \
  timeout -s KILL 420 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^bkeep "
