#!/bin/bash
# Session 70, call 3 (about 4 minutes, right after call 2 on the same machine, whose module cache
# it reuses): the harness's record of the forward at T 1, 16, 64, H 256-4096 (the peer-grid rows)
# on the working tree (step 104), as session 69's call 5 recorded step 102.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . N 16 'miles_rmsnorm_fwd__h(256|512|2048|4096)$'
echo "builds $(( $(date +%s) - t0 )) s"
fwd_small_record fwd_s70
grep -E "^\| H=(256|512)" /tmp/fwd_s70/results.md | head -30
