#!/bin/bash
# Session 46, call 3: BF16 widened by moving bits in every forward kernel (V: .device/V46, the
# working tree with unpack<bf16> specialised as widen) against the working tree (N: the fixed
# kernels only), streaming rows, in session 41's rows.py (the harness's engine); N V V N N V.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D46=docs/bench/h200/probes/2026-12-03-session46
ROWS=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
copy_tree V46 || exit 1
mods=$(python3 -c "
import json
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if m.startswith('miles_rmsnorm_fwd__h')))")
fbuild() {  # tree label
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 8 \
    $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fbuild /tmp/V46 V & fbuild . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
P="4096x256,16384x256,65536x256,4096x512,16384x512,65536x512,16384x1536,16384x2048,16384x4096"
R="16384x256,65536x512,16384x2048,16384x4096"
F="16384x256,65536x512,16384x2048"
for pair in ". N" "/tmp/V46 V" "/tmp/V46 V" ". N" ". N" "/tmp/V46 V"; do
  set -- $pair
  (cd $1 && timeout -s KILL 60 python3 $ROWS fwd plain bf16 $P 2>/dev/null \
    | sed "s/^/$2 plain bf16 /") >> $OUT/rows.txt
  (cd $1 && timeout -s KILL 40 python3 $ROWS fwd residual bf16 $R 2>/dev/null \
    | sed "s/^/$2 residual bf16 /") >> $OUT/rows.txt
  (cd $1 && timeout -s KILL 40 python3 $ROWS fwd plain fp32 $F 2>/dev/null \
    | sed "s/^/$2 plain fp32 /") >> $OUT/rows.txt
  echo "$2 $(( $(date +%s) - t0 )) s"
done
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
