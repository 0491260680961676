#!/bin/bash
# Session 75, call 5: the harness's backward (T 4096, 16384 and 65536; plain and residual; ours,
# aten, torch.compile and Liger) on main with step 109, compared with the last record of the same
# GPU model: session 68's on an H100 (docs/bench/h100/bwd_s68), session 62's on an H200
# (docs/bench/h200/bwd_s62).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$GPU"
case "$GPU" in
  *H200*) CMP=docs/bench/h200/bwd_s62/results.json.gz; NAME=bwd_s75_h200 ;;
  *) CMP=docs/bench/h100/bwd_s68/results.json.gz; NAME=bwd_s75 ;;
esac
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
bwd_record $NAME $CMP 90 330
grep -E "^\| H=(2048|4096|8192), bf16 w \| (16384|65536) " $OUT/$NAME/results.md | cut -c1-200
