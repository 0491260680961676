#!/bin/bash
# Session 25 A/B of the small-batch backward's fold (step 57): session 22's ab22.sh with PKG
# settable and the A side's main program built too. Step 57 changes the runtime (the borrowed
# workspace's fold slots) as well as the package, so A is the whole runtime of the commit before:
#   rm -rf .device/pkgA && mkdir -p .device/pkgA && git archive HEAD miles_ext_kernels | tar -x -C .device/pkgA
#   PKG=miles_ext_kernels SUITE_FIRST=1 PASSES=2 FAMILIES=plain,residual,per_head_contig \
#     ROWS=64,256 HIDDEN=256,2048,4096,5120,6144,8192 bash .device/ab25.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=${PKG:-miles_ext_kernels/kernels/rmsnorm}
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
suite() {
  [ -n "$NO_SUITE" ] && return
  python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -2
  echo "suite $(( $(date +%s) - t0 )) s"
}
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
[ -n "$SUITE_FIRST" ] && suite
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd_small --module miles_rmsnorm_bwd >/dev/null || exit 1; swap_to_b
echo "builds $(( $(date +%s) - t0 )) s"
H="${HARNESS:-python3 -m benchmarks.rmsnorm} --device cuda --only bwd --no-plots --no-host-overhead --rows ${ROWS:-1,16,64,256} --families ${FAMILIES:-plain,residual} --hidden ${HIDDEN:-1024,2048,4096,5120,6144,8192} --weights bf16 --candidates ours --ours-backends first_party --time-budget 100"
for pass in $(seq 1 ${PASSES:-2}); do
  $H --out $OUT/B$pass > /tmp/B.log 2>&1 || tail -20 /tmp/B.log
  swap_to_a; $H --out $OUT/A$pass > /tmp/A.log 2>&1 || tail -20 /tmp/A.log; swap_to_b
  echo "pass $pass $(( $(date +%s) - t0 )) s"
  python3 docs/bench/h200/probes/2026-11-30-session21/abtable.py $OUT/A$pass/results.json $OUT/B$pass/results.json
  rm -f $OUT/A$pass/results.md $OUT/B$pass/results.md
done
[ -z "$SUITE_FIRST" ] && suite
exit 0
