#!/bin/bash
# Session 75, call 3 (warm): P2 = P with kPaceMinIterations 16 (the backward program only, built
# beside call 1's), P P2 P2 P at chunks of 16 (16384 x 2048, 4096 x 8192) and 19 iterations
# (20000 x 2048, 5000 x 8192).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
rm -rf /tmp/P2 && cp -r . /tmp/P2
sed -i 's/constexpr int64_t kPaceMinIterations = 24;/constexpr int64_t kPaceMinIterations = 16;/' \
  /tmp/P2/$PKG/include/miles_rmsnorm/backward_policy.h
grep -c "kPaceMinIterations = 16" /tmp/P2/$PKG/include/miles_rmsnorm/backward_policy.h
(cd /tmp/P2 && python3 tools/gen_kernel_build_json.py > /dev/null)
build_matching /tmp/P2 P2 16 'miles_rmsnorm_bwd__h2048$'
echo "build $(( $(date +%s) - t0 )) s"
R=16384x2048,20000x2048,4096x8192,5000x8192
abba rows3.txt bwd $R "plain bf16" -- ". P" "/tmp/P2 P2"
abba rows3.txt bwd 16384x2048 "plain fp32" -- ". P" "/tmp/P2 P2"
echo "rows $(( $(date +%s) - t0 )) s"
python3 $D/../2026-12-03-session45/ab_table.py $OUT/rows3.txt
