#!/bin/bash
# Session 70, call 3 (about 4 minutes, right after call 2 on the same machine, whose module cache
# it reuses): the harness's record of the forward at T 1, 16, 64, H 256-4096 (the peer-grid rows)
# on the working tree (step 104), as session 69's call 5 recorded step 102.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_matching . N 16 'miles_rmsnorm_fwd__h(256|512|2048|4096)$'
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 330 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
  --hidden 256,512,2048,4096 --families plain,residual --weights bf16,fp32 \
  --candidates ours,aten,compile,liger --ours-backends first_party --compile-budget 60 \
  --time-budget 230 --no-plots --no-host-overhead --out /tmp/fwd_s70 > /tmp/fwd_s70.log 2>&1 \
  || tail -5 /tmp/fwd_s70.log
mkdir -p $OUT/fwd_s70 && cp /tmp/fwd_s70/results.* /tmp/fwd_s70.log $OUT/fwd_s70/
echo "done $(( $(date +%s) - t0 )) s"
grep -E "^\| H=(256|512)" /tmp/fwd_s70/results.md | head -30
