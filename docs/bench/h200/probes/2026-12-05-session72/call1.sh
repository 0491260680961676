#!/bin/bash
# Session 72, call 1: whichever card comes. On an H200, vp.sh (V, P and VP against main); then, as
# call 2, session 68's h200_call.sh (the GPU suite, step 101, the harness's backward); on any
# other card, session 71's call3.sh (V and pacing together against main, about 2 minutes).
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in
  *H200*) bash docs/bench/h200/probes/2026-12-05-session72/vp.sh ;;
  *) bash docs/bench/h200/probes/2026-12-05-session71/call3.sh ;;
esac
