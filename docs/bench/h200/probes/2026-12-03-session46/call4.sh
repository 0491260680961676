#!/bin/bash
# Session 46, call 4: the kept sources (step 81). Every module built, the GPU suite, and the
# harness's record of the forward at T 1, 16, 64 (ours and aten, every family).
# Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 240 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
  --candidates ours,aten --ours-backends first_party --no-plots --no-host-overhead \
  --out /tmp/record > /tmp/record.log 2>&1 || tail -5 /tmp/record.log
cp /tmp/record/results.md $OUT/record.md; cp /tmp/record/results.json $OUT/record.json
echo "record $(( $(date +%s) - t0 )) s"
grep -i "residual" $OUT/record.md | head -20
