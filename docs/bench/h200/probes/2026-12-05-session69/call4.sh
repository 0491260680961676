#!/bin/bash
# Session 69, call 4 (about 5 minutes): step 102 against HEAD (.device/H) under CUPTI, both
# orders (H N N H): the residual form at T 1-64 (its fixed kernel now reads x's fields from the
# first constant line and u's from the second, no row count), and plain calls past one row a CTA
# (T 64-1024: the fixed kernel's rows of a warp, the warp-rows kernel, forward_rows_kernel).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
copy_tree H
build_matching /tmp/H H 8 'miles_rmsnorm_fwd__h(256|512|2048|4096)' &
build_matching . N 8 'miles_rmsnorm_fwd__h(256|512|2048|4096)'
wait
echo "builds $(( $(date +%s) - t0 )) s"
twice() {  # tree label family weight shapes
  (cd $1 && FWD_TWICE_OURS_ONLY=1 timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py $5 $4 $3 2>&1 \
    | grep -v -i warn | sed "s/^/$2 /") >> $OUT/twice4.txt
}
RES=1x256,16x256,64x256,1x512,16x512,1x2048,16x2048,1x4096,16x4096
PLAIN=64x256,256x256,1024x512,64x2048,256x2048,64x4096,256x4096
for tree in "/tmp/H H" ". N" ". N" "/tmp/H H"; do
  set -- $tree
  twice $1 $2 residual bf16 $RES
  twice $1 $2 plain bf16 $PLAIN
done
echo "done $(( $(date +%s) - t0 )) s"
python3 - $OUT/twice4.txt <<'PY'
import sys, statistics
from collections import defaultdict
d = defaultdict(lambda: defaultdict(list))
fam = ""
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.split("|")]
    if "T x H" in line:
        fam = cells[1].split("(")[1].split(",")[0]
    elif len(cells) > 6 and cells[2] == "ours":
        d[(fam, cells[1])][line.split()[0]].append((float(cells[3]), float(cells[4])))
print("| family | shape | H first | N first | H second | N second | N/H first |")
for (f, s), by in d.items():
    h1 = statistics.median(v[0] for v in by["H"]); n1 = statistics.median(v[0] for v in by["N"])
    h2 = statistics.median(v[1] for v in by["H"]); n2 = statistics.median(v[1] for v in by["N"])
    print(f"| {f} | {s} | {h1:.3f} | {n1:.3f} | {h2:.3f} | {n2:.3f} | {n1 / h1:.3f} |")
PY
