#!/bin/bash
# Session 74, call 4 (as little device time as is left): the GPU tests that run paced launches
# under the final rule (1024-thread CTAs, chunks of 24 or more iterations), the modules built on
# demand with 16 jobs.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -x tests/gpu/test_api_gpu.py \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "workspace or evict_last_backward or large_calls" \
  2>&1 | tail -3
echo "done $(( $(date +%s) - t0 )) s"
