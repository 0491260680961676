#!/bin/bash
# Session 54 call 3: where the one-row backward's time goes against torch.compile's, under ncu
# (cold caches, duration and SM cycles a launch) at 1 x 512 and 1 x 2048 (FP32 weight): the
# half-vector kernel (base), the one-vector kernel (MILES_EXT_KERNELS_ONE_ROW_HALVES=0), Inductor,
# and seven diagnostic builds of the half-vector kernel (.device/v1-v7, headers only: v1 contract
# flags at compile time, v2 no dw store, v3 no second reduction level, v4 row addresses not
# dependent on the hidden size, v5 the row sum not tied to the rstd, v6 = v1 + v4 + v5, v7 all).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session54
NCU="/usr/local/cuda/bin/ncu --clock-control none --print-units base --csv \
  --metrics gpu__time_duration.sum,sm__cycles_active.max,smsp__inst_executed.sum"
tree() {  # name: /tmp/<name> with .device/<name> laid over the repository, its build.json regenerated
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && cp -r .device/$1/. /tmp/$1/ \
    && (cd /tmp/$1 && python3 tools/gen_kernel_build_json.py > /dev/null)
}
for v in v1 v2 v3 v4 v5 v6 v7; do tree $v; done
rm -rf /tmp/base && cp -r . /tmp/base
for v in base v1 v2 v3 v4 v5 v6 v7; do small /tmp/$v $v & done; wait
echo "builds $(( $(date +%s) - t0 )) s"
prof() {  # tree label [compile] [env...]
  (cd /tmp/$1 && env $4 timeout -s KILL 200 $NCU --kernel-name "regex:one_row|div_expand" \
    python3 $Q/ncu_t1.py 512,2048 fp32 $3 > $OUT/ncu_$2.csv 2> $OUT/ncu_$2.err) \
    || tail -3 $OUT/ncu_$2.err
}
prof base base compile
prof base one "" MILES_EXT_KERNELS_ONE_ROW_HALVES=0
for v in v1 v2 v3 v4 v5 v6 v7; do prof $v $v; done
echo "ncu $(( $(date +%s) - t0 )) s"
python3 $Q/ncu_table.py base=$OUT/ncu_base.csv one=$OUT/ncu_one.csv \
  $(for v in v1 v2 v3 v4 v5 v6 v7; do echo $v=$OUT/ncu_$v.csv; done)
