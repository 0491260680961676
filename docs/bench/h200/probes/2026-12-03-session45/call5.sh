#!/bin/bash
# Session 45, call 5: the residual form's small batches as two CTAs a row (H: .device/H,
# residual_halves.patch: forward_fixed_halves_kernel with a residual, each CTA summing the whole
# row and storing half of h_new and y, from 33 rows up to half the SMs at every fixed size)
# against the working tree (K). Bits (check_bits.py), then rows.py K H H K.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D45=docs/bench/h200/probes/2026-12-03-session45
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
CHECK=$(pwd)/$D45/check_bits.py
copy_tree H || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
fbuild() {  # tree label
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 8 \
    $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fbuild /tmp/H H & fbuild . K & wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/H && timeout -s KILL 120 python3 $CHECK 2048,4096,5120,6144,8192 33,48,64 2>&1) \
  | tee $OUT/bits_H.txt
echo "bits $(( $(date +%s) - t0 )) s"
S="40x6144,48x6144,56x6144,64x6144,64x2048,64x4096,64x5120,64x8192,48x4096"
for pair in ". K" "/tmp/H H" "/tmp/H H" ". K"; do
  set -- $pair
  for wt in bf16 fp32; do
    (cd $1 && timeout -s KILL 60 python3 $ROWS fwd residual $wt $S 2>/dev/null \
      | sed "s/^/$2 residual $wt /") >> $OUT/rows.txt
  done
done
python3 $D45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
