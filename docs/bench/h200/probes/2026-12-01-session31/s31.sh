#!/bin/bash
# Session 31: build the working tree (sm_90a), the GPU suite (SUITE=1) or none, then the probe
# scripts named in PROBES (paths, run in order, output to $OUT/<name>.txt). Run from the
# repository root on the GPU machine, .whl carried.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
t0=$(date +%s)
PYTHONPATH=/tmp/site:. python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
if [ -n "$SUITE" ]; then
  PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider -p no:logging \
    --show-capture=no tests/gpu 2>&1 | tee $OUT/suite.log | tail -8
  echo "suite $(( $(date +%s) - t0 )) s"
fi
for p in $PROBES; do
  n=$(basename $p .py)
  PYTHONPATH=/tmp/site:. python3 $p 2>&1 | grep -v -i warn | tee $OUT/$n.txt
  echo "$n $(( $(date +%s) - t0 )) s"
done
