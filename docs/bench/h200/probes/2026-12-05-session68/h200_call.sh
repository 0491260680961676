#!/bin/bash
# Session 68, one call on the H200 (about 6-7 minutes): main (steps 100-101) on the H200 — every
# module built, the GPU suite; step 101 A/B (session 67's next1.sh: R = main with the 1024-thread
# CTAs' ring always three stages, R M M R plain BF16, R M FP32 weights and the residual form);
# then the harness's backward at T 4096, 16384, 65536 against session 62's run (next2.sh).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
POLICY=miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_policy.h
rm -rf /tmp/R && cp -r . /tmp/R && (cd /tmp/R && sed -i 's/rows >= kBackwardLargeRows ? 2 : 3;/rows >= kBackwardLargeRows ? 3 : 3;/' $POLICY \
  && grep -q "? 3 : 3;" $POLICY && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/R R 4 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
build_tree 12
wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
bwd_ab r3.txt "/tmp/R R" ". M"
bwd_record bwd_s68 docs/bench/h200/bwd_s62/results.json.gz 80 200
grep -E "^\| H=(2048|4096), bf16" /tmp/bwd_s68/results.md | head -6
