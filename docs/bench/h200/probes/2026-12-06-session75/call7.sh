#!/bin/bash
# Session 75 (written after call 6 found no machine; it ran as call 10, on an H100): on an H200 the
# harness's backward record first (call5.sh's, against session 62's H200 record), then on any card
# session 68's record of the peer grid (h100_record.sh's command) and session 32's
# grid_summary.py over it.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$GPU"
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
case "$GPU" in
  *H200*) bwd_record bwd_s75_h200 docs/bench/h200/bwd_s62/results.json.gz 90 200
          grep -E "^\| H=(2048|4096|8192), bf16 w \| (16384|65536) " \
            $OUT/bwd_s75_h200/results.md | cut -c1-200 ;;
esac
timeout -s KILL 420 python3 -m benchmarks.rmsnorm --device cuda --only fwd,bwd \
  --rows 1,16,256,1024,4096,16384,65536 --families plain,residual \
  --candidates ours,aten,compile,liger --ours-backends first_party --compile-budget 120 \
  --time-budget 380 --no-plots --out /tmp/full_s75 > /tmp/full_s75.log 2>&1 \
  || tail -5 /tmp/full_s75.log
mkdir -p $OUT/full_s75 && cp /tmp/full_s75/results.* /tmp/full_s75.log $OUT/full_s75/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
grep -E "^\* Run|^\* Copy" /tmp/full_s75/results.md
python3 docs/bench/h200/probes/2026-12-02-session32/grid_summary.py /tmp/full_s75/results.json \
  | head -12
