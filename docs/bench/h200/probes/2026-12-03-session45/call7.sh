#!/bin/bash
# Session 45, call 7: a second record run of the forward at T 1, 16, 64 on the landed sources
# (ours and aten), the forward modules only. Run from the repository root, .whl carried. Cut off:
# the record run needed more than its 60 s (it builds the other modules it touches on first use).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
timeout -s KILL 100 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 $mods \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout -s KILL 60 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
  --candidates ours,aten --ours-backends first_party --no-plots --no-host-overhead \
  --out /tmp/record > /tmp/record.log 2>&1 || tail -5 /tmp/record.log
cp /tmp/record/results.md $OUT/record.md
grep "^| H=" $OUT/record.md | awk -F'|' '{print $2 "|" $3 "|" $5}' | sort -t'|' -k3 -n | tail -6
