#!/bin/bash
# Session 69, call 5 (about 3 minutes; run as one command line): the harness's record of the
# forward at T 1, 16, 64, H 256-4096 (the peer-grid rows) on the working tree (step 102).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . N 16 'miles_rmsnorm_fwd__h(256|512|2048|4096)'
echo "builds $(( $(date +%s) - t0 )) s"
fwd_small_record fwd_s69
grep -E "^\| H=(256|512)" /tmp/fwd_s69/results.md | head -30
