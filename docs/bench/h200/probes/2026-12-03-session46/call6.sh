#!/bin/bash
# Session 46, call 6: the fixed forward kernel with y's operands widened once, before the row
# sum's barrier (W: the working tree) against step 81 as committed (N: HEAD 0eae404, .device/N46).
# Every module of W built, the GPU suite on W, session 41's rows.py N W W N N W at T 1, 16, 64,
# then three record runs of W's forward at T 1, 16, 64 (ours only).
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree N46 || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
(cd /tmp/N46 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
  --jobs 4 $mods > /tmp/build_N.log 2>&1 || tail -20 /tmp/build_N.log) &
build_tree 12
wait
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 240 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
S="1x2048,16x2048,64x2048,1x4096,16x4096,64x4096,1x6144,16x6144,64x6144,1x8192,16x8192,64x8192"
for pair in "/tmp/N46 N" ". W" ". W" "/tmp/N46 N" "/tmp/N46 N" ". W"; do
  set -- $pair
  for fam in "residual bf16" "plain bf16" "plain fp32"; do
    set -- $pair $fam
    (cd $1 && timeout -s KILL 60 python3 $ROWS fwd $3 $4 $S 2>/dev/null \
      | sed "s/^/$2 $3 $4 /") >> $OUT/rows.txt
  done
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
for i in 1 2 3; do
  timeout -s KILL 100 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
    --candidates ours --ours-backends first_party --no-plots --no-host-overhead \
    --out /tmp/rec$i > /tmp/rec$i.log 2>&1 || tail -5 /tmp/rec$i.log
  cp /tmp/rec$i/results.md $OUT/record_$i.md
done
echo "records $(( $(date +%s) - t0 )) s"
for i in 1 2 3; do
  grep "^| H=" $OUT/record_$i.md | awk -F'|' -v i=$i '{ if ($5+0 >= 2.85) print i, $2, $3, $5 }'
done
grep "residual bf16 | 16x6144\|residual bf16 | 64x6144" $OUT/table.txt
python3 - $OUT/table.txt <<'PY'
import math, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.split("|")]
    if len(c) < 6 or c[1] in ("family", "---"):
        continue
    r = float(c[5])
    g["all"].append(r); g["T=" + c[2].split("x")[0]].append(r); g[c[1]].append(r)
for k, v in g.items():
    print(f"{k}: geomean W/N {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)}")
PY
