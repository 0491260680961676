#!/bin/bash
# Session 52 call 3: the harness's CUDA graph under CUPTI (graph_trace.py): kernel durations and
# launch gaps of ours (A: HEAD; F4: .device/w6 at MEK_PROBE_WR=4) against torch.compile.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session52
[ -d /tmp/w6 ] || { copy_tree w6; fwd_build . A 8 & fwd_build /tmp/w6 F 8 & wait; }
echo "ready $(( $(date +%s) - t0 )) s"
SH=1024x256,16384x256,65536x256,16384x512
for w in bf16 fp32; do
  timeout -s KILL 150 python3 $Q/graph_trace.py $SH $w 2>&1 | grep -E "TRACE|Error|error" \
    | sed "s/^/A /" | tee -a $OUT/trace.txt
done
(cd /tmp/w6 && MEK_PROBE_WR=4 timeout -s KILL 150 python3 $Q/graph_trace.py $SH bf16 2>&1 \
  | grep -E "TRACE|Error|error" | sed "s/^/F4 /" | tee -a $OUT/trace.txt)
echo "trace $(( $(date +%s) - t0 )) s"
