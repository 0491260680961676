#!/bin/bash
# Session 45, call 3: the fixed forward kernel without its per-head branch, in the harness's
# engine (session 41's rows.py: CUDA graphs, the harness's L2 flush subtracted). A: HEAD 7bd9491
# (.device/old); N: the working tree (rows at row * stride, per-head views to forward_rows_kernel);
# T: .device/T (N with the weights' loads tied to the row's first use, tie.patch). Forward at
# T 1, 16, 64 and H 2048-8192: plain and residual BF16 weights, plain FP32 weights; A N T T N A.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D45=docs/bench/h200/probes/2026-12-03-session45
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree old || exit 1
copy_tree T || exit 1
mods=""
for m in $(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join(m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))"); do
  mods="$mods --module $m"
done
fbuild() {  # tree label
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 6 \
    $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fbuild /tmp/old A & fbuild /tmp/T T & fbuild . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="1x2048,16x2048,64x2048,1x4096,16x4096,64x4096,1x5120,16x5120,64x5120,1x6144,16x6144,64x6144,1x8192,16x8192,64x8192"
rows() {  # tree label
  for fam in "plain bf16" "residual bf16" "plain fp32"; do
    set -- $fam
    (cd $TREE && timeout -s KILL 120 python3 $ROWS fwd $1 $2 $S 2>/dev/null | sed "s/^/$LABEL $1 $2 /")
  done
}
for pair in "/tmp/old A" ". N" "/tmp/T T" "/tmp/T T" ". N" "/tmp/old A"; do
  set -- $pair; TREE=$1 LABEL=$2 rows >> $OUT/rows.txt
done
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
