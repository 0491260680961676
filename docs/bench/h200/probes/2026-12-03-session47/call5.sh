#!/bin/bash
# Session 47, call 5: the landed sources (step 82, the half-warp test with FP16 rows added): every
# module built, then the GPU suite. Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
grep -E "^(FAILED|ERROR)" $OUT/gpu_suite.log | head -20
