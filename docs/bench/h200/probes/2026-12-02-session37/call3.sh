#!/bin/bash
# Session 37 call 3: x (and u) loaded with an L2 evict_last policy (.device/xel, torch.compile's
# first-pass hint) against the working tree at large T (B V V B); then ncu counters of our
# forward and torch.compile's at plain 65536 x 8192 and residual 16384 x 4096.
S34=docs/bench/h200/probes/2026-12-02-session34
D=docs/bench/h200/probes/2026-12-02-session37
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
V=xel MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 16384x8192,65536x8192,16384x4096;fwd residual bf16 16384x4096,4096x6144" \
  timeout -s KILL 330 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^xel "
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
timeout -s KILL 150 ncu --profile-from-start off --clock-control none --metrics $M --csv \
  python3 $D/ncu_fwd.py > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc $?"; tail -3 $OUT/ncu.err
python3 - <<'PY'
import csv, os
rows = list(csv.reader(l for l in open(os.environ["OUT"] + "/ncu.csv") if l.startswith('"')))
if rows:
    head = rows[0]; ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
    ids = head.index("ID")
    for r in rows[1:]:
        print(r[ids], r[ki][:40], r[mi], r[vi])
PY
