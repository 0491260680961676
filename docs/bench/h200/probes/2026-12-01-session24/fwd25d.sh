#!/bin/bash
# Session 24, call 6: the GPU suite on step 55 (the forward's spread window at 384 CTAs' worth of
# rows, at most 4096, up to H = 8192; the loop-free plain forward from H = 520), then an A/B of
# its forward against HEAD (A) on the harness grid rows it changes, and rows off the grid.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -3
echo "suite $(( $(date +%s) - t0 )) s"
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/buildA.log 2>&1 || { tail -30 /tmp/buildA.log; swap_to_b; exit 1; }; swap_to_b
COMMON="--device cuda --only fwd --no-plots --no-host-overhead --candidates ours --ours-backends first_party --time-budget 100"
i=0
for spec in "16,64,256:256:per_head_strided,per_head_contig:bf16" "256:4096,5120,6144,8192:residual:bf16,fp32" "64:256,512,1536,2048,4096,5120,6144,8192:plain,residual:bf16"; do
  i=$((i+1)); IFS=: read rows hid fam wts <<< "$spec"
  for side in B A; do
    [ $side = A ] && swap_to_a
    python3 -m benchmarks.rmsnorm $COMMON --weights $wts --rows $rows --hidden $hid --families $fam --out $OUT/$side$i > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    [ $side = A ] && swap_to_b
  done
  echo "set $i ($spec) $(( $(date +%s) - t0 )) s"
  python3 docs/bench/h200/probes/2026-11-30-session21/abtable.py $OUT/A$i/results.json $OUT/B$i/results.json
  rm -f $OUT/A$i/results.md $OUT/B$i/results.md
done
