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
SH=16384x2048,16384x4096,65536x2048,65536x4096,16384x8192
abba r3.txt bwd $SH "plain bf16" -- "/tmp/R R" ". M"
ab r3.txt bwd 16384x2048,16384x4096 "plain fp32" "residual bf16" -- "/tmp/R R" ". M"
echo "rows $(( $(date +%s) - t0 )) s"
timeout -s KILL 300 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
  --ours-backends first_party --compile-budget 80 --time-budget 200 --no-plots \
  --no-host-overhead --compare docs/bench/h200/bwd_s62/results.json.gz \
  --out /tmp/bwd_s68 > /tmp/bwd_s68.log 2>&1 || tail -5 /tmp/bwd_s68.log
mkdir -p $OUT/bwd_s68 && cp /tmp/bwd_s68/results.* /tmp/bwd_s68.log $OUT/bwd_s68/ 2>/dev/null
echo "harness $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/r3.txt
grep -E "^\| H=(2048|4096), bf16" /tmp/bwd_s68/results.md | head -6
