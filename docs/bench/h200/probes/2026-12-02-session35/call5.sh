#!/bin/bash
# Session 35 call 5: call 4's fold with warp 0 polling every run's counter in one relaxed load a
# lane, then an acquire fence (call 4 polled with 16 acquire loads one after another: 7-42% slower
# calls). The GPU suite on the working tree, then rows_ab (B: the working tree, V: HEAD; B/V < 1:
# the working tree is faster). The fold's arithmetic is call 4's, whose bits equalled HEAD's.
D=docs/bench/h200/probes/2026-12-02-session35
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/v.log 2>&1 || { tail -20 /tmp/v.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 \
  | tee $OUT/suite.log | tail -2
echo "suite $(( $(date +%s) - t0 )) s"
V=head MODULES=miles_rmsnorm_bwd timeout -s KILL 200 bash docs/bench/h200/probes/2026-12-02-session34/rows_ab.sh 2>&1 | grep --line-buffered -v "^B \|^head "
