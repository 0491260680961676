#!/bin/bash
# Session 58 call 7 (the device seconds left): where torch.compile's lead on the forward at T 1-16,
# H 256-512 lies, kernel time or the gap after the flush (fwd_small.py: the harness's engine, then
# each body's kernels under CUPTI), BF16 weights, step 95's tree (forward unchanged since 57).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-04-session58
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 150 python3 $P/fwd_small.py 1x256,16x256,1x512,16x512 bf16 2>&1 \
  | grep -v -i warn | tee $OUT/fwd_small.txt | grep -v "^KERNEL" | tail -8
