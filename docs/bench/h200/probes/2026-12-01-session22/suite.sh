#!/bin/bash
# Build the first-party programs for this GPU and run the GPU suite; log to $OUT/suite.log.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
set -o pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 || exit 1
echo "build wall $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu "$@" 2>&1 | tee $OUT/suite.log | tail -40
echo "suite wall $(( $(date +%s) - t0 )) s"
