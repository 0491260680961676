#!/bin/bash
# Session 24's forward A/B (calls 3-6; one driver, consolidated after the calls from the four
# they ran, which differed only in their sets and in call 6's suite). B: the working tree; A:
# .device/pkgA, a `git archive` of the commit before (calls 3-5: B's spec.py held the value
# tried, build.json regenerated). Each set times B, then A, and prints abtable.py's table. Run from the repository root on the GPU machine, with .whl carried.
#   SETS: space-separated sets, "rows:hidden" (session 23's rows_ab.py: plain and residual, BF16
#         weights) or "rows:hidden:families:weights" (the harness's own grid)
#   SUITE_FIRST=1: build B and run the GPU suite before the sets (call 6)
#   KT_OPS=fwd|bwd|fwd,bwd (session 26's knob): CUPTI durations of B then A before the sets
#         (session 25's kernel_times.py, cold and warm L2); ONLY=bwd (session 26): the sets'
#         op (default fwd)
# Session 26, call 1: SUITE_FIRST=1 KT_OPS=fwd SETS="64,256:2048,4096,6144,8192
#   1,16:256,2048,8192" (B: session 25's x_coherent.patch)
# Session 26, call 12: SUITE_FIRST=1 ONLY=bwd SETS="1:256,512,1536,2048,4096:plain:bf16,fp32"
#   (B: the one-row backward's butterfly widths at compile time)
# Call 3: SETS="1280,1536,2048:256,512 640,768,1024:1024 320,384,512:2048
#   160,192,256:4096,6144,8192 16,64,256:256:per_head_strided,per_head_contig:bf16"
# Call 4: SETS="2560,3072,4096:256,512 1280,1536,2048:1024 640,768,1024:2048
#   320,384,512:4096,6144,8192"
# Call 5: SETS="8192,12288:64 4096,6144:128 1536,2048,4096,16384,65536:768,1024 3072:256,512
#   384:8192 16,64,256:256:per_head_strided,per_head_contig:bf16"
# Call 6: SUITE_FIRST=1 SETS="16,64,256:256:per_head_strided,per_head_contig:bf16
#   256:4096,5120,6144,8192:residual:bf16,fp32 64:256,512,1536,2048,4096,5120,6144,8192:plain,residual:bf16"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
PROBES=docs/bench/h200/probes
side_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
side_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
build() { python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/build.log 2>&1 \
  || { tail -30 /tmp/build.log; return 1; }; }
t0=$(date +%s)
build || exit 1
if [ -n "$SUITE_FIRST" ]; then
  python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee $OUT/suite.log | tail -3
fi
side_a; build; ok=$?; side_b; [ $ok = 0 ] || exit 1
echo "builds (and suite) $(( $(date +%s) - t0 )) s"
if [ -n "$KT_OPS" ]; then
  for side in B A; do
    [ $side = A ] && side_a
    for f in 1 0; do
      FLUSH=$f OPS=$KT_OPS python3 $PROBES/2026-12-01-session25/kernel_times.py \
        > $OUT/kt_${side}_flush$f.txt 2>&1
    done
    [ $side = A ] && side_b
  done
  for f in 1 0; do
    echo "== CUPTI flush=$f: B then A (ours rows)"
    grep -h " ours" $OUT/kt_B_flush$f.txt; grep -h " ours" $OUT/kt_A_flush$f.txt
  done
  echo "CUPTI $(( $(date +%s) - t0 )) s"
fi
COMMON="--device cuda --only ${ONLY:-fwd} --no-plots --no-host-overhead --candidates ours"
COMMON="$COMMON --ours-backends first_party --time-budget 100"
i=0
for set in $SETS; do
  i=$((i + 1))
  IFS=: read -r rows hidden families weights <<< "$set"
  if [ -n "$families" ]; then
    cmd="python3 -m benchmarks.rmsnorm $COMMON --weights $weights --families $families"
  else
    cmd="python3 $PROBES/2026-12-01-session23/rows_ab.py $COMMON --weights bf16"
  fi
  for side in B A; do
    [ $side = A ] && side_a
    $cmd --rows "$rows" --hidden "$hidden" --out $OUT/$side$i > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
    [ $side = A ] && side_b
  done
  echo "set $i ($set) $(( $(date +%s) - t0 )) s"
  python3 $PROBES/2026-11-30-session21/abtable.py $OUT/A$i/results.json $OUT/B$i/results.json
  rm -f $OUT/A$i/results.md $OUT/B$i/results.md
done
