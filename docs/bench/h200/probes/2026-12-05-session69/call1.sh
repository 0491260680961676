#!/bin/bash
# Session 69, first call (any card): on an H200, session 68's h200_call.sh (every module built,
# the GPU suite, step 101 A/B, the harness's backward against session 62's record); on an H100,
# every module built and the GPU suite on main (40cb0dc, not yet run there). Then, on either card,
# session 68's fwd_twice.py (next1.sh): is torch.compile's lead on the small forward cold or warm?
P68=docs/bench/h200/probes/2026-12-05-session68
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "card: $gpu"
if [[ "$gpu" == *H200* ]]; then
  bash $P68/h200_call.sh || exit 1
else
  source docs/bench/h200/probes/2026-12-03-session42/common.sh
  build_tree 16
  echo "builds $(( $(date +%s) - t0 )) s"
  gpu_suite
fi
bash $P68/next1.sh
