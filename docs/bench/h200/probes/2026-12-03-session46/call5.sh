#!/bin/bash
# Session 46, call 5 (on call 4's machine, its modules built): three more record runs of the
# forward at T 1, 16, 64 (ours only), for the run-to-run spread of the rows near 3 us.
# Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ls /tmp/mek-cache >/dev/null 2>&1 || build_tree 16
for i in 1 2 3; do fwd_record record_$i ours; done
echo "t $(( $(date +%s) - t0 )) s"
slow_rows $OUT/record_?.md
