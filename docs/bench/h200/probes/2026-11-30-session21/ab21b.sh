#!/bin/bash
# Session 21, second A/B: the fixed forward with weights first and the residual form (B, working
# tree) against HEAD (A, .device/pkgA): plain and residual at the fixed hidden sizes, T <= 1024,
# BF16 and FP32 weights, two passes; the GPU suite on B; CUPTI kernel times of B's residual calls.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1; swap_to_b
echo "builds $(( $(date +%s) - t0 )) s"
H="python3 -m benchmarks.rmsnorm --device cuda --only fwd --no-plots --no-host-overhead --rows 1,16,64,256,1024 --families plain,residual --hidden 2048,4096,5120,6144,8192 --weights bf16,fp32 --candidates ours --ours-backends first_party"
for pass in 1 2; do
  $H --out $OUT/B$pass > /tmp/B.log 2>&1 || tail -20 /tmp/B.log
  swap_to_a; $H --out $OUT/A$pass > /tmp/A.log 2>&1 || tail -20 /tmp/A.log; swap_to_b
done
echo "ab $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -2
echo "suite $(( $(date +%s) - t0 )) s"
ONLY_OURS=1 python3 .device/kprobe21b.py 2>&1 | grep -v "Warn\|warn\|capture_end" | tee $OUT/kprobeB.txt
for pass in 1 2; do python3 .device/abtable.py $OUT/A$pass/results.json $OUT/B$pass/results.json; done
rm -f $OUT/A1/results.md $OUT/A2/results.md $OUT/B1/results.md $OUT/B2/results.md
