#!/bin/bash
# Session 57 call 6 (the review, on what device time was left): the forward modules of the final
# tree and the GPU suite's forward tests (the launcher's one lambda, wide_row_offset in the fixed
# kernels and the split test changed host code only; the sm_90a device code is call 5's).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "(forward or per_head or half_warp) and not small_batch_program" 2>&1 \
  | tee $OUT/gpu_forward.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
