#!/bin/bash
# Session 66 call 1 (about 5 minutes, main's kernels only): host_thread.py (where the autograd
# step's host time goes: the backward body on the engine's device thread against the main
# thread, a worker thread and a per-call handoff; cProfile of both), then session 65's
# call1.sh (the deterministic backward with its grid forced to smaller GPUs' residency).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . A 4 'miles_rmsnorm_(fwd|bwd|bwd_small)__h2048$' || exit 1
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 docs/bench/h200/probes/2026-12-05-session66/host_thread.py 2000 \
  2>&1 | grep -v -i warn > $OUT/host_thread.txt
tail -18 $OUT/host_thread.txt
echo "host $(( $(date +%s) - t0 )) s"
bash docs/bench/h200/probes/2026-12-05-session65/call1.sh
