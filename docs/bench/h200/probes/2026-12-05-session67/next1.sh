#!/bin/bash
# Prepared for the next device session (an H200; about 3 minutes with builds): step 101 on the
# H200. /tmp/R = main with backward_max_stages always 3 (the three-stage ring of the 1024-thread
# CTAs, as before step 101); rows.py's backward R M M R (plain BF16, five shapes) and R M (FP32
# weights, the residual form), where M is main (two stages). Session 67 measured M/R 0.984-0.999
# on an H100.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
POLICY=miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_policy.h
rm -rf /tmp/R && cp -r . /tmp/R && (cd /tmp/R && sed -i 's/rows >= kBackwardLargeRows ? 2 : 3;/rows >= kBackwardLargeRows ? 3 : 3;/' $POLICY \
  && grep -q "? 3 : 3;" $POLICY && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching . M 8 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
build_matching /tmp/R R 8 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
bwd_ab r3.txt "/tmp/R R" ". M"
