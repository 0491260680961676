#!/bin/bash
# Prepared in session 70 for the next device session (about 5 minutes; on an H200 if one is lent,
# whose small-T forward has not been timed since step 101): where steps 102-105 leave the forward
# against torch.compile at T 1-16 — fwd_twice.py (ours and torch.compile, twice) at the one-warp
# and 4-warp rows, plain and residual; then the harness's record at T 1, 16, 64, H 256-4096.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
build_matching . N 16 'miles_rmsnorm_fwd__h(256|512|2048|4096)$'
echo "builds $(( $(date +%s) - t0 )) s"
for pass in 1 2; do
  fwd_twice_run . N plain 1x256,16x256,1x512,16x512,64x512,1x2048 compile
  fwd_twice_run . N residual 1x256,16x512 compile
done
echo "twice $(( $(date +%s) - t0 )) s"
fwd_small_record fwd_next
twice_table
grep -E "^\| H=(256|512)" /tmp/fwd_next/results.md | head -12
