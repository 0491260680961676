#!/bin/bash
# Session 39 call 6: the deterministic backward's evict_last instance taken by backward_keep_rows
# (the working tree, B) against 966c672's package (.device/head), B V V B, where the rule takes it
# (65536 x 4096, 32768 x 8192, 65536 x 6144) and where it does not (16384 x 4096, residual 65536
# x 4096); B/V < 1: the rule is faster. Then every module built and the GPU suite.
S34=docs/bench/h200/probes/2026-12-02-session34
V=head MODULES=miles_rmsnorm_bwd RUNS="bwd plain bf16 65536x4096,32768x8192,65536x6144,16384x4096;bwd residual bf16 65536x4096" \
  timeout -s KILL 200 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/b.log 2>&1 || tail -5 /tmp/b.log
timeout -s KILL 100 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 | tail -4
