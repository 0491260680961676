#!/bin/bash
# Session 38 call 7: the GPU test of forward_keep_rows (which instance a streaming call launches,
# and its bits against the same rows as a small batch), on the forward program only.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
timeout -s KILL 120 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  --module miles_rmsnorm_fwd > /tmp/b.log 2>&1 || tail -5 /tmp/b.log
timeout -s KILL 60 python3 -m pytest -q -p no:cacheprovider -p no:logging -rs \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "evict_last or fixed_halves" 2>&1 | tail -6
