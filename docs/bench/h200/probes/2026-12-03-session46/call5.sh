#!/bin/bash
# Session 46, call 5 (on call 4's machine, its modules built): three more record runs of the
# forward at T 1, 16, 64 (ours only), for the run-to-run spread of the rows near 3 us.
# Run from the repository root, .whl carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ls /tmp/mek-cache >/dev/null 2>&1 || build_tree 16
for i in 1 2 3; do
  timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
    --candidates ours --ours-backends first_party --no-plots --no-host-overhead \
    --out /tmp/rec$i > /tmp/rec$i.log 2>&1 || tail -5 /tmp/rec$i.log
  cp /tmp/rec$i/results.md $OUT/record_$i.md
done
echo "t $(( $(date +%s) - t0 )) s"
for i in 1 2 3; do
  grep "^| H=" $OUT/record_$i.md | awk -F'|' -v i=$i '{ if ($5+0 >= 2.85) print i, $2, $3, $5 }'
done
