#!/bin/bash
# Session 77, call 9 (the session's last device seconds): on an H200 only (it exits at once on
# any other card), the harness's backward bandwidth lines on main (ours, plain BF16, T 16384 and
# 65536 at H 2048 and 4096): the backward's 85% line at 16384 x 2048, unmeasured on an H200 since
# session 62 (steps 101 and 107-109 since).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0;; esac
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . M 8 'miles_rmsnorm_bwd__h2048$' &
build_matching . M2 8 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
  --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
  > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
echo "harness $(( $(date +%s) - t0 )) s"
