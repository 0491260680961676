#!/bin/bash
# Prepared for the next device session (an H200; about 6-7 minutes): the harness's backward at
# T 4096, 16384 and 65536 on main (steps 100-101), as session 62's call_h.sh, compared with its
# run (docs/bench/h200/bwd_s62/), so that docs/kernels.md's headline rows can move to it.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 400 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
  --ours-backends first_party --compile-budget 90 --time-budget 330 --no-plots \
  --no-host-overhead --compare docs/bench/h200/bwd_s62/results.json.gz \
  --out /tmp/bwd_s68 > /tmp/bwd_s68.log 2>&1 || tail -5 /tmp/bwd_s68.log
mkdir -p $OUT/bwd_s68 && cp /tmp/bwd_s68/results.* /tmp/bwd_s68.log $OUT/bwd_s68/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(2048|4096)" /tmp/bwd_s68/results.md | head -12
