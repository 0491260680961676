#!/bin/bash
# Session 37 call 7: the kept change (step 72: the streaming forward's rows loaded with an L2
# evict_last policy, where kKeepRows says). The forward program built, every forward GPU test;
# then an A/B against HEAD (.device/head) on rows of smaller H than call 6 measured. (The backward
# programs' SASS is HEAD's: checked on the CPU machine.)
S34=docs/bench/h200/probes/2026-12-02-session34
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
T0=$SECONDS
timeout -s KILL 90 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd > /tmp/f.log 2>&1 \
  || { tail -20 /tmp/f.log; exit 1; }
echo "fwd built in $((SECONDS - T0)) s"
timeout -s KILL 60 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py tests/gpu/test_launch_plans_gpu.py -k forward \
  > /tmp/fwd_suite.log 2>&1; tail -3 /tmp/fwd_suite.log; cp /tmp/fwd_suite.log $OUT/call7_fwd_tests.log
echo "forward tests done at $((SECONDS - T0)) s"
V=head MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x512,65536x1024,16384x2048,65536x2048;fwd residual bf16 16384x1024,16384x2048" \
  timeout -s KILL $((200 - (SECONDS - T0))) bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
echo "end at $((SECONDS - T0)) s"
