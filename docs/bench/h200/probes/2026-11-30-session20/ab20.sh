#!/bin/bash
# Session 20: A/B of the forward at T 256 and 1024 (ours only, harness method, two passes each),
# B = working tree, A = .device/pkgA; the GPU suite on B; the record run (all peers) on B.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1; swap_to_b
echo "builds $(( $(date +%s) - t0 )) s"
H="python3 -m benchmarks.rmsnorm --device cuda --only fwd --no-plots --no-host-overhead"
for pass in 1 2; do
  $H --rows 256,1024 --out $OUT/B$pass --candidates ours --ours-backends first_party > /tmp/B.log 2>&1 || tail -20 /tmp/B.log
  swap_to_a; $H --rows 256,1024 --out $OUT/A$pass --candidates ours --ours-backends first_party > /tmp/A.log 2>&1 || tail -20 /tmp/A.log; swap_to_b
done
echo "ab $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -4
echo "suite $(( $(date +%s) - t0 )) s"
$H --rows 1,16,64,256,1024 --out $OUT/rec --ours-backends first_party --compare docs/bench/h200/fwd_fixed_s19/results.json.gz > /tmp/rec.log 2>&1 || tail -20 /tmp/rec.log
echo "record $(( $(date +%s) - t0 )) s"
for pass in 1 2; do python3 .device/abtable.py $OUT/A$pass/results.json $OUT/B$pass/results.json; done
python3 .device/abtable.py $OUT/A1/results.json $OUT/rec/results.json
rm -f $OUT/A1/results.md $OUT/A2/results.md $OUT/B1/results.md $OUT/B2/results.md
