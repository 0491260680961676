#!/bin/bash
# Session 49 call 5: the landing tree (the latency window from H 1024 at 2^21 elements, the
# launcher never widening the window's grid): every module and the GPU suite; bits against HEAD
# (A: .device/A49) at the window's edges.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D49=docs/bench/h200/probes/2026-12-03-session49
copy_tree A49 || exit 1
build_tree 12 & fwd_build /tmp/A49 A 4 & wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
export BITS_CALLS="512x1024,2048x1024,2049x1024,1638x1280,1639x1280,1365x1536,1366x1536,3000x256"
(cd /tmp/A49 && timeout -s KILL 60 python3 $OLDPWD/$D49/bits.py save /tmp/bits_A.pt 2>&1 | tail -1)
timeout -s KILL 60 python3 $D49/bits.py check /tmp/bits_A.pt 2>&1 | tail -1 | tee $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
