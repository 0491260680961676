#!/bin/bash
# Session 22 A/B of the small-batch backward (B: the working tree; A: .device/pkgA, the commit
# before, from `git archive`): T 1-256, BF16 weights, ours only, B then A twice, each pass's
# table printed as it ends, and the GPU suite on B. Calls 11 and 12 (step 50):
#   FAMILIES=plain,residual,per_head_strided,per_head_contig bash ab22.sh
# (the harness's grid has no per-head rows at these sizes: 28 rows either way); call 13
# (step 51): SUITE_FIRST=1 FAMILIES=plain,residual bash ab22.sh. Session 23 (steps 52-53) ran it
# as call 3 (the same) and call 4 (SUITE_FIRST=1 ROWS=48,64,96,128,192,256 HIDDEN=5120,6144,8192
# HARNESS="python3 docs/bench/h200/probes/2026-12-01-session23/rows_ab.py" PASSES=1: rows off
# the grid, one pass); call 6 ran .device/ab24.sh of the session 23 notes (NO_SUITE=1: the
# second harness call of one device call).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
# PKG: the tree swapped for A (session 25's call 1 swapped the whole runtime: PKG=miles_ext_kernels);
# A_MODULES: the modules built for A (session 25: "miles_rmsnorm_bwd_small miles_rmsnorm_bwd").
PKG=${PKG:-miles_ext_kernels/kernels/rmsnorm}
A_MODULES=${A_MODULES:-miles_rmsnorm_bwd_small}
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
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 $(printf -- '--module %s ' $A_MODULES) >/dev/null || exit 1; swap_to_b
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
