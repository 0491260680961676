#!/bin/bash
# Session 46, call 2: the fixed forward kernels with BF16 widened by moving bits and the row sum's
# second level as a local tree (step 81), in the harness's engine (session 41's rows.py: CUDA
# graphs, the harness's L2 flush subtracted). A: HEAD a035dbf (.device/A46); N: the working tree.
# Forward at T 1, 16, 64 and H 2048-8192: plain and residual BF16 weights, plain FP32 weights;
# A N N A; then the T = 64 residual rows A N N A N A. Run from the repository root, .whl and
# .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D46=docs/bench/h200/probes/2026-12-03-session46
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree A46 || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
fbuild() {  # tree label
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 8 \
    $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fbuild /tmp/A46 A & fbuild . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="1x2048,16x2048,64x2048,1x4096,16x4096,64x4096,1x5120,16x5120,64x5120,1x6144,16x6144,64x6144,1x8192,16x8192,64x8192"
rows() {  # tree label
  for fam in "plain bf16" "residual bf16" "plain fp32"; do
    set -- $fam
    (cd $TREE && timeout -s KILL 120 python3 $ROWS fwd $1 $2 $S 2>/dev/null | sed "s/^/$LABEL $1 $2 /")
  done
}
for pair in "/tmp/A46 A" ". N" ". N" "/tmp/A46 A"; do
  set -- $pair; TREE=$1 LABEL=$2 rows >> $OUT/rows.txt
done
echo "rows $(( $(date +%s) - t0 )) s"
S="64x2048,64x4096,64x5120,64x6144,64x8192"
for pair in "/tmp/A46 A" ". N" ". N" "/tmp/A46 A" ". N" "/tmp/A46 A"; do
  set -- $pair
  (cd $1 && timeout -s KILL 60 python3 $ROWS fwd residual bf16 $S 2>/dev/null \
    | sed "s/^/$2 residual bf16 /") >> $OUT/rows64.txt
done
echo "rows64 $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt > $OUT/table.txt
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows64.txt | tee $OUT/table64.txt
python3 - $OUT/table.txt <<'PY'
import math, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.split("|")]
    if len(c) < 6 or c[1] in ("family", "---"):
        continue
    t = c[2].split("x")[0]
    g["all"].append(float(c[5])); g["T=" + t].append(float(c[5])); g[c[1]].append(float(c[5]))
for k, v in g.items():
    print(f"{k}: geomean N/A {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)}")
PY
