#!/bin/bash
# Session 52 call 5 (call 4 ran on a stale build.json: every build failed its integrity check):
# the working tree's forward modules, the GPU tests of the forward (-k "forward or rstd_fast";
# the backward modules' sm_90a SASS is HEAD's, compared on the workstation), then ours against
# torch.compile in one process, then rows.py (N).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-03-session51
fwd_build . N 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 75 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "forward or rstd_fast" 2>&1 \
  | tee $OUT/gpu_forward.log | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
timeout -s KILL 45 python3 $P/inductor_dump.py 16384x256,65536x256,16384x512,65536x512 bf16 2>&1 \
  | grep "^TIMES" | tee -a $OUT/times.txt
echo "times $(( $(date +%s) - t0 )) s"
SH=3073x256,4096x256,16384x256,65536x256,3073x512,4096x512,16384x512,65536x512
ab rows.txt fwd $SH "plain bf16" "plain fp32" -- ". N"
cat $OUT/rows.txt
echo "rows $(( $(date +%s) - t0 )) s"
