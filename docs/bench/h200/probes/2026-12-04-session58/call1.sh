#!/bin/bash
# Session 58 call 1: the GPU suite on main (c8855f0, session 57's final code, whose full suite
# did not run); a strided row partition of the deterministic backward (.device/strided: chunk c
# holds rows c, c + n_chunks, ...) timed against main's contiguous chunks (rows.py, A B B A);
# the deterministic backward against the atomic one in main's tree.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-04-session58
overlay_tree strided
build_matching /tmp/strided S 4 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
build_tree 12; wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
SH=16384x2048,16384x4096,65536x2048,65536x4096,4096x4096,16384x8192
abba bwd.txt bwd $SH "plain bf16" "plain fp32" -- ". A" "/tmp/strided S"
echo "abba $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 $P/nondet.py 16384x2048,16384x4096,65536x2048 2>/dev/null \
  | tee $OUT/nondet.txt
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/bwd.txt
