#!/bin/bash
# Session 63 call 2 (prepared; not run: no device was lent in session 63). Self-contained.
# /tmp/U = main + param_round.patch: the fixed forward kernels issue every kernel-parameter load
# in one round (x loaded unpredicated, a row past the end reading row 0 and leaving after the row
# sum; the residual form no longer leaves before its loads). main's SASS (sm_90a) waits for the
# row count's constant load before loading x's pointer and stride (plain) or every pointer
# (residual): two rounds before the first memory request. Then: y / rstd / h_new bits of U
# against main (bits63.py dumpf), rows.py forward A U U A (plain and residual BF16) and A U (FP32
# weights) at T 1-256, session 58's fwd_small.py (ours against torch.compile, the harness's engine
# and CUPTI) in both trees, and the GPU suite on U (every module built).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session63
P58=docs/bench/h200/probes/2026-12-04-session58
rm -rf /tmp/U && cp -r . /tmp/U \
  && (cd /tmp/U && git apply $P/param_round.patch && python3 tools/gen_kernel_build_json.py > /dev/null) \
  || exit 1
build_matching . A 4 'miles_rmsnorm_fwd__h(256|512|1024|1536|4096)(_|$)' &
(cd /tmp/U && build_tree 12) &
wait
echo "builds $(( $(date +%s) - t0 )) s"
BITS=1x256,16x256,64x256,1x512,16x512,100x512,1x4096,16x1536,256x4096
timeout -s KILL 60 python3 $P/bits63.py dumpf /tmp/fbits_A.pt $BITS 2>&1 | tail -1
(cd /tmp/U && timeout -s KILL 60 python3 $P/bits63.py dumpf /tmp/fbits_U.pt $BITS 2>&1 | tail -1)
python3 $P/bits63.py cmp /tmp/fbits_A.pt /tmp/fbits_U.pt > $OUT/fbits.txt 2>&1; tail -1 $OUT/fbits.txt
SH=1x256,16x256,64x256,256x256,1x512,16x512,64x512,1x1024,16x1536,1x4096,64x4096,256x4096
abba fwd.txt fwd $SH "plain bf16" "residual bf16" -- ". A" "/tmp/U U"
ab fwd.txt fwd $SH "plain fp32" -- ". A" "/tmp/U U"
echo "ab $(( $(date +%s) - t0 )) s"
for m in A U; do
  case $m in A) tree=.;; *) tree=/tmp/$m;; esac
  (cd $tree && timeout -s KILL 120 python3 $P58/fwd_small.py 1x256,16x256,1x512,16x512 bf16 2>&1 \
    | grep -v -i warn > $OUT/fwd_small_$m.txt; grep -v "^KERNEL" $OUT/fwd_small_$m.txt | tail -6)
done
echo "compile $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/fwd.txt
(cd /tmp/U && gpu_suite)
