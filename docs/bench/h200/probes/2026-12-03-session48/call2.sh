#!/bin/bash
# Session 48 call 2: cold_parts.py (which part of a cold start costs ours more than Liger).
set -u
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D48=docs/bench/h200/probes/2026-12-03-session48
fwd_build . cur 16
echo "build $(( $(date +%s) - t0 )) s"
C="plain:1x256:bf16,plain:1x1536:bf16,plain:16x4096:bf16,plain:16x8192:bf16"
C="$C,plain:256x4096:bf16,residual:16x6144:bf16,plain:16x2048:fp32"
timeout -s KILL 300 python3 $D48/cold_parts.py ours,liger $C 2>&1 | grep -v -i warn \
  | tee $OUT/cold_parts.txt
echo "parts $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --hidden 256,1536,4096,8192 \
  --rows 1,16,256 --families plain --weights bf16 --candidates ours,liger --ours-backends first_party \
  --no-plots --no-host-overhead --out /tmp/h2 > /tmp/h2.log 2>&1 || tail -5 /tmp/h2.log
cp /tmp/h2/results.md $OUT/harness.md
grep "^| H=" $OUT/harness.md
echo "harness $(( $(date +%s) - t0 )) s"
