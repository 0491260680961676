#!/bin/bash
# Session 53 call 5: where the one-row backward's warps wait at 1 x 2048 (FP32 weight), step 88's
# kernel beside torch.compile's: ncu's full set (its cache flush: cold), the source page (per SASS
# instruction: executions and warp stall samples) and the details page, and the report itself.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
timeout -s KILL 200 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 8 \
  --module miles_rmsnorm_bwd_small__h2048 --module miles_rmsnorm_fwd__h2048 > /tmp/build.log 2>&1 \
  || { tail -20 /tmp/build.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
NCU=/usr/local/cuda/bin/ncu
timeout -s KILL 150 $NCU --clock-control none --set full --import-source no \
  --kernel-name "regex:backward_one_row|div_expand" -o /tmp/t1 \
  python3 $Q/ncu_bwd.py 2048 fp32 > $OUT/ncu_run.log 2>&1 || tail -5 $OUT/ncu_run.log
echo "ncu $(( $(date +%s) - t0 )) s"
cp /tmp/t1.ncu-rep $OUT/ 2> /dev/null
$NCU -i /tmp/t1.ncu-rep --page source --csv --print-source sass > $OUT/source_2048.csv 2> $OUT/source.err
$NCU -i /tmp/t1.ncu-rep --page details --csv > $OUT/details_2048.csv 2> /dev/null
python3 docs/bench/h200/probes/2026-12-04-session52/ncu_last.py "1x2048" $OUT/details_2048.csv
wc -l $OUT/source_2048.csv; head -3 $OUT/source_2048.csv | cut -c1-600; tail -2 $OUT/source.err
