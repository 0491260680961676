#!/bin/bash
# Session 21: the harness's --graphs option on CUDA; forward T in {16,64,256,1024}, ours + Liger,
# once with one graph per candidate and once with three.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
for g in 1 3; do
  python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 16,64,256,1024 --families plain,residual --weights bf16 --no-plots --no-host-overhead --candidates ours,liger --ours-backends first_party --graphs $g --out $OUT/g$g > $OUT/g$g.log 2>&1 || tail -20 $OUT/g$g.log
done
python3 .device/graphs_table.py $OUT/g1/results.json $OUT/g3/results.json
