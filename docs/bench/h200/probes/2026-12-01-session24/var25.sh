#!/bin/bash
# Session 24, call 2: where the multi-run fold's time goes. Variants of the small-batch program's
# fold run length (kSmallFoldRun), the same cluster counts: base 8, run16, run4.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
HDR=miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/config.h
cp $HDR /tmp/config.h.orig
t0=$(date +%s)
for v in 8 16 4; do
  cp /tmp/config.h.orig $HDR
  sed -i "s/constexpr int kSmallFoldRun = 8;/constexpr int kSmallFoldRun = $v;/" $HDR
  grep -c "kSmallFoldRun = $v;" $HDR
  python3 tools/gen_kernel_build_json.py >/dev/null || exit 1
  python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_bwd_small > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
  [ $v = 8 ] && { python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }; }
  echo "built run $v $(( $(date +%s) - t0 )) s"
  python3 docs/bench/h200/probes/2026-12-01-session23/rows_ab.py --device cuda --only bwd --no-plots --no-host-overhead --rows 256,384,768,1536 --families plain --hidden 256 --weights bf16 --candidates ours --ours-backends first_party --time-budget 100 --out $OUT/run$v > /tmp/h.log 2>&1 || tail -20 /tmp/h.log
  python3 - $OUT/run$v/results.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(f"{r['case']['key'].split('/')[2]}={r['cells']['ours[first_party]']['stats']['median_us']:.2f}" for r in d["rows"]))
PY
done
cp /tmp/config.h.orig $HDR
