#!/bin/bash
# Session 46, call 7: the landed sources (K: HEAD) against a035dbf (A: .device/A46) past T = 64,
# where the fixed kernels still serve small batches (up to 2^21 elements): rows.py A K K A.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree A46 || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
fbuild() {  # tree label
  (cd $1 && timeout -s KILL 300 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 8 \
    $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fbuild /tmp/A46 A & fbuild . K & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="128x2048,256x2048,1024x2048,256x4096,512x4096,128x6144,256x6144,128x8192,256x8192"
for pair in "/tmp/A46 A" ". K" ". K" "/tmp/A46 A"; do
  for fam in "residual bf16" "plain bf16" "plain fp32"; do
    set -- $pair $fam
    (cd $1 && timeout -s KILL 40 python3 $ROWS fwd $3 $4 $S 2>/dev/null \
      | sed "s/^/$2 $3 $4 /") >> $OUT/rows.txt
  done
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
python3 - $OUT/table.txt <<'PY'
import math, sys
v = [float(c[5]) for c in ([x.strip() for x in l.split("|")] for l in open(sys.argv[1]))
     if len(c) > 5 and c[1] not in ("family", "---")]
print(f"geomean K/A {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)}")
PY
