#!/bin/bash
# Session 45, call 4: the kept sources (call 3's T: the fixed forward without its per-head branch,
# the weights tied to the row's first use). Every module built, the GPU suite, the harness's
# record of the forward at T 1, 16, 64 (ours and aten, every family), and rows.py at the T = 64
# residual rows against HEAD 7bd9491 (.device/old), A B B A.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D45=docs/bench/h200/probes/2026-12-03-session45
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree old || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
(cd /tmp/old && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
  --jobs 4 $mods > /tmp/build_A.log 2>&1 || tail -20 /tmp/build_A.log) &
build_tree 12
wait
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 240 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
  --candidates ours,aten --ours-backends first_party --no-plots --no-host-overhead \
  --out /tmp/record > /tmp/record.log 2>&1 || tail -5 /tmp/record.log
cp /tmp/record/results.md $OUT/record.md; cp /tmp/record/results.json $OUT/record.json
echo "record $(( $(date +%s) - t0 )) s"
S="64x2048,64x4096,64x5120,64x6144,64x8192"
for pair in "/tmp/old A" ". K" ". K" "/tmp/old A"; do
  set -- $pair
  (cd $1 && timeout -s KILL 60 python3 $ROWS fwd residual bf16 $S 2>/dev/null \
    | sed "s/^/$2 residual bf16 /") >> $OUT/rows.txt
done
python3 $D45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
grep -i "residual\|family" $OUT/record.md | head -40
