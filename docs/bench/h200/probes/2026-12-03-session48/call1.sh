#!/bin/bash
# Session 48 call 1: where the small forward calls' time goes cold, ours against Liger and
# torch.compile: CUPTI kernel durations cold and warm (kernel_times.py), then ncu (full set,
# caches flushed, clocks free) of one call of ours and of Liger for each case, exported as raw
# metrics, section details and the SASS source page with the stall samples.
set -u
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D48=docs/bench/h200/probes/2026-12-03-session48
fwd_build . cur 16
echo "build $(( $(date +%s) - t0 )) s"
C="plain:1x256:bf16,plain:1x1536:bf16,plain:16x4096:bf16,plain:16x8192:bf16"
C="$C,plain:256x4096:bf16,residual:16x6144:bf16"
timeout -s KILL 200 python3 $D48/kernel_times.py $C > $OUT/kt_cold.txt 2>$OUT/kt_cold.err
echo "kt cold $(( $(date +%s) - t0 )) s"
FLUSH=0 CANDS=ours,liger timeout -s KILL 100 python3 $D48/kernel_times.py $C > $OUT/kt_warm.txt \
  2>$OUT/kt_warm.err
echo "kt warm $(( $(date +%s) - t0 )) s"
NCU=/usr/local/cuda/bin/ncu
N="plain:1x256:bf16,plain:16x4096:bf16,plain:256x4096:bf16"
for c in ours liger; do
  timeout -s KILL 120 $NCU --clock-control none --cache-control all --nvtx --nvtx-include "probe/" \
    --set full --import-source no -f -o $OUT/ncu_$c python3 $D48/ncu_cands.py $c $N \
    > $OUT/ncu_$c.log 2>&1 || tail -5 $OUT/ncu_$c.log
  $NCU -i $OUT/ncu_$c.ncu-rep --page raw --csv > $OUT/raw_$c.csv 2>&1
  $NCU -i $OUT/ncu_$c.ncu-rep --page details --print-details all > $OUT/details_$c.txt 2>&1
  $NCU -i $OUT/ncu_$c.ncu-rep --page source --csv --print-source sass > $OUT/source_$c.csv 2>&1
  echo "ncu $c $(( $(date +%s) - t0 )) s"
done
cat $OUT/kt_cold.txt $OUT/kt_warm.txt
grep -E "^  [a-z].*\(|Duration|Warp Cycles Per Issued|Stall" $OUT/details_ours.txt | head -40
