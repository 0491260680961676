#!/bin/bash
# Session 75, call 9 (calls 6-8 found no machine; device time short): the GPU suite with the paced
# instance's new test.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
grep -E "FAILED" $OUT/gpu_suite.log | tail -8
timeout -s KILL 120 python3 -m pytest -v -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k paced 2>&1 | grep -E "PASS|FAIL|SKIP|passed|failed" | sed "s/.*:://" | tail -10
