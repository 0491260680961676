#!/bin/bash
# Session 38 call 2: the launcher's evict_last rule (forward_keep_rows, step 73; working tree, B)
# against kKeepRows false (.device/nokeep, V), B V V B: where the rule is off the two launch the
# same SASS (a noise check), where it is on B/V < 1 is the policy's gain. Then the GPU suite.
S34=docs/bench/h200/probes/2026-12-02-session34
V=nokeep MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x1024,16384x3072,16384x4096,16384x5120,16384x7168,16384x8192,4096x16384;fwd residual bf16 16384x2048,16384x4096,8192x8192,4096x16384" \
  timeout -s KILL 300 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^nokeep "
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 150 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/b.log 2>&1 || tail -5 /tmp/b.log
timeout -s KILL 120 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 | tail -4
