#!/bin/bash
# Session 39 call 3: the kept rule (forward_keep_rows by rows and hidden, forward_keep_ring; the
# working tree, B) against 966c672's package (.device/head), B V V B, where the rule newly takes
# the policy (and two calls where it does not: 8192 x 10240, residual 16384 x 2048). B/V < 1:
# the rule is faster. Then every module built and the GPU suite.
S34=docs/bench/h200/probes/2026-12-02-session34
V=head MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x5120,65536x7168,32768x16384,16384x12288,65536x10240,16384x10240,8192x10240;fwd plain fp32 16384x12288,65536x12288;fwd residual bf16 65536x1024,32768x2048,65536x2048,32768x3072,16384x2048" \
  timeout -s KILL 330 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 200 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/b.log 2>&1 || tail -5 /tmp/b.log
timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 | tail -4
