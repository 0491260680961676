#!/bin/bash
# Session 39 call 4: plain 65536 x 6144 and 32768 x 6144 (the plain element rule's calls at H
# 6144, not in call 3) against 966c672's package (.device/head), B V V B; then the peers on the
# streaming forward rows step 74 changed (T 16384 and 65536, H 2048-12288, plain and residual,
# BF16 weights), compared with session 32's full-grid run.
S34=docs/bench/h200/probes/2026-12-02-session34
V=head MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 65536x6144,32768x6144" \
  timeout -s KILL 200 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^head "
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
export PYTHONUNBUFFERED=1
t0=$(date +%s)
timeout -s KILL 300 python3 -m benchmarks.rmsnorm --device cuda --out $OUT/peers --only fwd --no-plots \
  --no-host-overhead --candidates ours,aten,compile,liger --rows 16384,65536 \
  --hidden 2048,5120,6144,10240,12288 --families plain,residual --weights bf16 \
  --compile-budget 120 --time-budget 200 \
  --compare docs/bench/h200/full_s32/results.json.gz > $OUT/harness.log 2>&1 || tail -20 $OUT/harness.log
echo "harness $(( $(date +%s) - t0 )) s"
grep "^| H=" $OUT/peers/results.md | cut -d'|' -f2-8
