#!/bin/bash
# Session 67 call 3 (about 4 minutes with builds): two_stage.patch (step 101: the 1024-thread
# CTAs of the deterministic backward take a two-stage ring from 16384 rows) against main, rows.py's
# backward A T T A (plain BF16, five shapes) and A T (FP32 weights, the residual form), then the
# GPU suite on the patched tree (every module built).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session67
rm -rf /tmp/T && cp -r . /tmp/T && (cd /tmp/T && git apply $P/two_stage.patch) || exit 1
build_matching . A 6 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
(cd /tmp/T && build_tree 12) &
wait
echo "builds $(( $(date +%s) - t0 )) s"
bwd_ab t2.txt ". A" "/tmp/T T"
(cd /tmp/T && gpu_suite)
