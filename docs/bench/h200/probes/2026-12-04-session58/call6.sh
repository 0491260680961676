#!/bin/bash
# Session 58 call 6: call 5's seven failures were the new tests' own bug (ModuleRecord keeps its
# hidden rule in `extra`); the atomic-program tests again on the fixed test file.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
mods=$(python3 -c "
import json, re
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules']
               if re.match(r'miles_rmsnorm_(bwd|bwd_nondet|bwd_small|fwd)__h(2048|12288)$', m)))")
timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 $mods \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "atomic or non_deterministic" 2>&1 \
  | tee $OUT/gpu_atomic.log | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
