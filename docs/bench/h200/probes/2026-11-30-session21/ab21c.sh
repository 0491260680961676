#!/bin/bash
# Session 21, experiment: the residual form's latency window at the fixed sizes widened to 2^23
# elements (B, working tree) against HEAD (A), residual rows T 512-2048, two passes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1; swap_to_b
H="python3 -m benchmarks.rmsnorm --device cuda --only fwd --no-plots --no-host-overhead --rows 512,1024,2048 --families residual --weights bf16 --candidates ours,liger --ours-backends first_party"
for pass in 1 2; do
  $H --out $OUT/B$pass > /tmp/B.log 2>&1 || tail -20 /tmp/B.log
  swap_to_a; $H --out $OUT/A$pass > /tmp/A.log 2>&1 || tail -20 /tmp/A.log; swap_to_b
done
for pass in 1 2; do python3 .device/graphs_table.py $OUT/A$pass/results.json $OUT/B$pass/results.json; done
