#!/bin/bash
# Session 50 call 3: the landed sources (0b75454, step 85) in the harness against the peers:
# H 256 and 512 at T 1024-65536 (ours, torch.compile, Liger; plain and residual, BF16 and FP32
# weights), then H 640, 896, 1024 and 1536 at T 1024 and 2048 (ours, Liger).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
peers() {  # name timeout args...
  local name=$1 limit=$2
  shift 2
  timeout -s KILL $limit python3 -m benchmarks.rmsnorm --device cuda --only fwd \
    --families plain,residual --ours-backends first_party --no-plots --no-host-overhead \
    --out /tmp/$name "$@" > /tmp/$name.log 2>&1 || tail -5 /tmp/$name.log
  cp /tmp/$name/results.md $OUT/$name.md; cp /tmp/$name/results.json $OUT/$name.json
  echo "$name $(( $(date +%s) - t0 )) s"
}
peers peers_small_h 270 --hidden 256,512 --rows 1024,2048,4096,16384,65536 \
  --candidates ours,compile,liger
peers peers_mid_h 110 --hidden 640,896,1024,1536 --rows 1024,2048 --candidates ours,liger
grep "^| H=" $OUT/peers_small_h.md $OUT/peers_mid_h.md | cut -d'|' -f2-9 | cut -c1-150
