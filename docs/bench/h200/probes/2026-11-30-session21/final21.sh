#!/bin/bash
# Session 21: the final sources (steps 47-48), ours and Liger, small forward calls at the fixed
# kernel's hidden sizes, three graphs a cell.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64,256 --families plain,residual --hidden 2048,4096,5120,6144,8192 --weights bf16 --no-plots --no-host-overhead --candidates ours,liger --ours-backends first_party --graphs 3 --out $OUT/final > $OUT/final.log 2>&1 || tail -20 $OUT/final.log
python3 .device/graphs_table.py $OUT/final/results.json $OUT/final/results.json | awk '{print $1, $4, $5, $7, $8}' | column -t
