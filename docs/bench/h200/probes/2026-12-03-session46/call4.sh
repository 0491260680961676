#!/bin/bash
# Session 46, call 4: the kept sources of call 2 (step 81). Every module built, the GPU suite, and
# the harness's record of the forward at T 1, 16, 64 (ours and aten, every family).
# Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
fwd_record record ours,aten
echo "record $(( $(date +%s) - t0 )) s"
grep -i "residual" $OUT/record.md | head -20
