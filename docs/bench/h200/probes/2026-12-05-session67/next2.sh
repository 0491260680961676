#!/bin/bash
# Prepared for the next device session (an H200; about 6-7 minutes): the harness's backward at
# T 4096, 16384 and 65536 on main (steps 100-101), as session 62's call_h.sh, compared with its
# run (docs/bench/h200/bwd_s62/), so that docs/kernels.md's headline rows can move to it.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
bwd_record bwd_s68 docs/bench/h200/bwd_s62/results.json.gz 90 330
grep -E "^\| H=(2048|4096)" /tmp/bwd_s68/results.md | head -12
