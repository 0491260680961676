#!/bin/bash
# Session 57 call 3: step 93 with call 2's test fix (the new per-head test's plain form has two
# outputs; one token's heads are read as rows of one head). The GPU suite on the working tree,
# then the harness's forward of the strided per-head family ([T, 24 of 32, 256]) with the peers.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 240 python3 -m benchmarks.rmsnorm --device cuda --only fwd \
  --families per_head_strided --candidates ours,compile,liger --ours-backends first_party \
  --no-plots --no-host-overhead --compile-budget 150 --time-budget 220 --out /tmp/peers \
  > /tmp/peers.log 2>&1 || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
grep "^| H=" $OUT/peers.md | cut -d'|' -f2-7
