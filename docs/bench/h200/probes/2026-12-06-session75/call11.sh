#!/bin/bash
# Session 75, call 11 (review: the GPU test reads spec.backward_pace, the rule's Python mirror,
# in place of its own copy): the backward and forward programs built, then the paced instance's
# test and the launch-rule tests beside it.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
build_matching . M 16 'miles_rmsnorm_(bwd|fwd)__h2048$'
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 -m pytest -v -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "paced or large_calls or evict_last_backward" 2>&1 | grep -E "PASS|FAIL|SKIP|passed|failed" \
  | sed "s/.*:://" | tail -24
echo "tests $(( $(date +%s) - t0 )) s"
