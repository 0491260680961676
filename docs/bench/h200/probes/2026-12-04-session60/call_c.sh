#!/bin/bash
# Session 60's prepared call (not run: no device was lent in session 60). Self-contained (a fresh
# machine): A = main (the working tree), /tmp/B = main + session 59's fold_tree.patch, /tmp/C =
# B + large_chunks.patch (calls of T >= 16384 at H 1800-2048 and 3848-4096 on sm_90a: 132 chunks
# in 1024-thread CTAs, one an SM). The GPU suite on C (every module built; C holds B's fold), then
# rows.py: plain BF16 A B C C B A, FP32 weights and the residual form A B C; then the table.
# If the suite fails on C, session 59's call2.sh runs it on B alone.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P59=docs/bench/h200/probes/2026-12-04-session59
P=docs/bench/h200/probes/2026-12-04-session60
put() { { patch -s -p1 < $1 || git apply $1; } && python3 tools/gen_kernel_build_json.py > /dev/null; }
rm -rf /tmp/B /tmp/C && cp -r . /tmp/B && (cd /tmp/B && put $P59/fold_tree.patch) \
  && cp -r /tmp/B /tmp/C && (cd /tmp/C && put $P/large_chunks.patch) || exit 1
BWD='miles_rmsnorm_bwd__h(1536|2048|4096)(_|$)'
build_matching . A 2 "$BWD" &
build_matching /tmp/B B 2 "$BWD" &
(cd /tmp/C && build_tree 12)
wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/C && gpu_suite)
grep -E "large_calls|FAILED" $OUT/gpu_suite.log | head -20
SH=16384x2048,16384x4096,65536x2048,65536x4096,4096x2048,4096x4096,16384x1536,32768x2048
for m in A B C C B A; do
  case $m in A) tree=.;; *) tree=/tmp/$m;; esac
  rows_run bwd.txt $m $tree plain bf16 $SH
done
for fw in "plain fp32" "residual bf16"; do
  rows_run bwd.txt A . $fw $SH
  rows_run bwd.txt B /tmp/B $fw $SH
  rows_run bwd.txt C /tmp/C $fw $SH
done
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/bwd.txt
