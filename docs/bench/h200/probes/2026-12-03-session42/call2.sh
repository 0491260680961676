#!/bin/bash
# Session 42, call 2: the working tree (N3: N2 with outputs spread over the cluster by element)
# against HEAD (.device/old: A) and N2 (.device/n2: call 1's build with rows past a task's end
# zeroed instead of selected and four staged rows), window_sweep.py (session 28) over the column
# clusters' shapes; the GPU suite on N3; stamps of N3 and of its "cheap" copy
# (make_stamped.py, stamps_probe.cu). Run from the repository root, .whl and .device carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 \
  PYTHONUNBUFFERED=1
D=docs/bench/h200/probes/2026-12-03-session42
PKG=miles_ext_kernels/kernels/rmsnorm
SWEEP_PY=$(pwd)/docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
INC="-I$D/.. -I$PKG/include"
t0=$(date +%s)
python3 $D/make_stamped.py /tmp/st > /dev/null && python3 $D/make_stamped.py /tmp/stc cheap > /dev/null || exit 1
nvcc -arch=sm_90a -std=c++17 -O3 -I/tmp/st $INC $D/stamps_probe.cu -o /tmp/probe 2>&1 | grep -i error &
nvcc -arch=sm_90a -std=c++17 -O3 -I/tmp/stc $INC $D/stamps_probe.cu -o /tmp/probe_cheap 2>&1 | grep -i error &
for v in old n2; do rm -rf /tmp/$v && cp -r . /tmp/$v && rm -rf /tmp/$v/$PKG && cp -r .device/$v/$PKG /tmp/$v/$PKG; done
small() { (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
  --jobs 4 --module miles_rmsnorm_bwd_small__h256 > /tmp/build_$2.log 2>&1 \
  || { tail -20 /tmp/build_$2.log; exit 1; }) }
small /tmp/old A & PA=$!
small /tmp/n2 N2 & PB=$!
timeout -s KILL 420 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 12 \
  > /tmp/build_new.log 2>&1 || { tail -30 /tmp/build_new.log; exit 1; }
wait $PA || exit 1; wait $PB || exit 1; wait
echo "builds $(( $(date +%s) - t0 )) s"
echo "== stamps"; timeout -s KILL 120 /tmp/probe > $OUT/stamps.txt
timeout -s KILL 120 /tmp/probe_cheap > $OUT/stamps_cheap.txt
S="64:256,256:256,512:256,640:256,1024:256,1536:256,2048:256,768:512,1024:512,1536:512"
export SHAPES="$S,512:1024,768:1024,1024:1024"
sweep() { (cd $1 && timeout -s KILL 150 python3 $SWEEP_PY 2>&1 | grep -v -i warn > $OUT/sweep_$2.txt)
  echo "sweep $2 $(( $(date +%s) - t0 )) s"; }
sweep /tmp/old A; sweep /tmp/n2 N2; sweep . N3; sweep /tmp/old A2
timeout -s KILL 280 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
paste -d'|' $OUT/stamps.txt $OUT/stamps_cheap.txt | cut -c1-150
python3 - $OUT <<'PY'
import re, sys
out = sys.argv[1]
runs = ["A", "N2", "N3", "A2"]
rows = {}
for r in runs:
    for line in open(f"{out}/sweep_{r}.txt"):
        m = re.match(r"\s*(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+\S+$", line)
        if m:
            rows.setdefault(m.group(1), {})[r] = (m.group(2), m.group(3))
print("cold / warm us:", " | ".join(runs))
for shape, v in rows.items():
    print(f"{shape:>20s} " + " | ".join("/".join(v.get(r, ("-", "-"))) for r in runs))
PY
