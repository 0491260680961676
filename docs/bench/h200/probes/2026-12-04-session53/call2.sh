#!/bin/bash
# Session 53 call 2: the backward at T = 1 (H 256-4096, FP32 and BF16 weights), ours against
# torch.compile: harness medians, CUPTI kernels of each body (bwd_t1.py), ncu of both kernels at
# 1 x 2048 and 1 x 4096 with an FP32 weight, and the SASS of the kernels Inductor generated.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
mods=""
for h in 256 512 1024 2048 4096; do mods="$mods --module miles_rmsnorm_bwd_small__h$h"; done
for h in 256 512 1024 2048 4096; do mods="$mods --module miles_rmsnorm_fwd__h$h"; done
timeout -s KILL 300 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 $mods \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
for w in fp32 bf16; do
  timeout -s KILL 200 python3 $Q/bwd_t1.py 256,512,1024,2048,4096 $w > $OUT/bwd_t1_$w.txt 2>&1 \
    || tail -5 $OUT/bwd_t1_$w.txt
  echo "trace $w $(( $(date +%s) - t0 )) s"
done
NCU="timeout -s KILL 120 /usr/local/cuda/bin/ncu --clock-control none --csv --page details
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats
  --section InstructionStats --kernel-name regex:backward|triton"
for h in 2048 4096; do
  $NCU python3 $Q/ncu_bwd.py $h fp32 > $OUT/ncu_$h.csv 2> /dev/null
  python3 docs/bench/h200/probes/2026-12-04-session52/ncu_last.py "1x$h" $OUT/ncu_$h.csv
done
echo "ncu $(( $(date +%s) - t0 )) s"
for f in $(find /tmp/torchinductor_$(whoami) ~/.triton -name '*.cubin' 2> /dev/null); do
  echo "== $f"; /usr/local/cuda/bin/cuobjdump -sass $f | grep -v "^\s*/\*[0-9a-f]*\*/\s*$"
done > $OUT/inductor_sass.txt 2>&1
grep -c "==" $OUT/inductor_sass.txt
cat $OUT/bwd_t1_fp32.txt $OUT/bwd_t1_bf16.txt | grep "^|"
