#!/bin/bash
# Session 24, call 4: FORWARD_SPREAD_CTAS 512 (B) against 256 (A, call 3's B).

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
t0=$(date +%s)
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/buildA.log 2>&1 || { tail -30 /tmp/buildA.log; swap_to_b; exit 1; }; swap_to_b
echo "builds $(( $(date +%s) - t0 )) s"
COMMON="--device cuda --only fwd --no-plots --no-host-overhead --weights bf16 --candidates ours --ours-backends first_party --time-budget 100"
R=docs/bench/h200/probes/2026-12-01-session23/rows_ab.py
i=0
for spec in "2560,3072,4096:256,512" "1280,1536,2048:1024" "640,768,1024:2048" "320,384,512:4096,6144,8192"; do
  i=$((i+1)); rows=${spec%%:*}; hid=${spec##*:}
  for side in B A; do
    [ $side = A ] && swap_to_a
    if [ "$spec" = grid ]; then
      python3 -m benchmarks.rmsnorm $COMMON --rows 16,64,256 --hidden 256 --families per_head_strided,per_head_contig --out $OUT/$side$i > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    else
      python3 $R $COMMON --rows $rows --hidden $hid --out $OUT/$side$i > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    fi
    [ $side = A ] && swap_to_b
  done
  echo "set $i ($spec) $(( $(date +%s) - t0 )) s"
  python3 docs/bench/h200/probes/2026-11-30-session21/abtable.py $OUT/A$i/results.json $OUT/B$i/results.json
  rm -f $OUT/A$i/results.md $OUT/B$i/results.md
done
