#!/bin/bash
# Session 38 call 3: every module of the working tree (step 73's forward_keep_rows) built for
# sm_90a, then the GPU suite.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/b.log 2>&1 || tail -5 /tmp/b.log
timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no tests/gpu 2>&1 | tail -2
