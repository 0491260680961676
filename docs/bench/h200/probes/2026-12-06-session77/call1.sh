#!/bin/bash
# Session 77, call 1: diagnostics (timing only) of the FP32-weight forward's penalty at T 1024-4096.
# N = no FP32 weight loads at all (no_weight_loads.patch: every weight is eps, wrong values): what
# any change to the weight loads could at most save. C = session 76's coalesced_diagnostic.patch
# (the weights read as two coalesced halves, wrong values). M N C C N M, FP32 weights; main's BF16
# weights beside them; then main's FP32 / BF16 ratio across the grid's waves (T around 792 = 6 CTAs
# x 132 SMs at H 5120, 2112 = 16 x 132 at H 2048).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D76=$(pwd)/docs/bench/h200/probes/2026-12-06-session76
D77=$(pwd)/docs/bench/h200/probes/2026-12-06-session77
nvidia-smi --query-gpu=name --format=csv,noheader
patched_tree N $D77/no_weight_loads.patch || exit 1
patched_tree C $D76/coalesced_diagnostic.patch || exit 1
build_matching . M 6 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/N N 5 'miles_rmsnorm_fwd__h2048$' &
build_matching /tmp/C C 5 'miles_rmsnorm_fwd__h2048$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
R=4096x1536,4096x2048,1024x4096,4096x4096,1024x5120,1024x6144,1024x8192,16384x2048
ab rows1.txt fwd $R "plain fp32" -- ". M" "/tmp/N N" "/tmp/C C"
ab rows1.txt fwd $R "plain fp32" -- "/tmp/C C" "/tmp/N N" ". M"
ab rows1.txt fwd $R "plain bf16" -- ". M"
echo "rows $(( $(date +%s) - t0 )) s"
W=528x5120,792x5120,800x5120,900x5120,1024x5120,1188x5120,1320x5120,1584x5120,1600x5120
W=$W,1056x4096,1100x4096,2112x2048,2200x2048,3168x2048,4096x2048,4224x2048
ab waves1.txt fwd $W "plain fp32" "plain bf16" -- ". M"
ab waves1.txt fwd $W "plain fp32" "plain bf16" -- ". M"
echo "waves $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows1.txt
python3 - $OUT/waves1.txt <<'PY'
import json, statistics, sys
from collections import defaultdict
r = defaultdict(list)
for line in open(sys.argv[1]):
    label, fam, wt, data = line.split(" ", 3)
    for s, us in json.loads(data).items():
        r[(s, wt)].append(us)
print("| shape | fp32 | bf16 | fp32/bf16 |")
for s in dict.fromkeys(k[0] for k in r):
    a, b = statistics.median(r[(s, "fp32")]), statistics.median(r[(s, "bf16")])
    print(f"| {s} | {a:.2f} | {b:.2f} | {a / b:.3f} |")
PY
