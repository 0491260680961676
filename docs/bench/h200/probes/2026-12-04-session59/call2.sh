#!/bin/bash
# Session 59's prepared call (not run: no device was lent after call 1): step 96
# (fold_tree.patch: the fold over every CTA, one round of loads a thread, a fixed tree over the
# runs; the barrier's departures as reductions nothing waits for) against main (the working
# tree, A), the GPU suite on main + the patch (/tmp/B), and a probe copy of that (/tmp/s59b,
# apply_probe.py: timelines, skips, b1024 = 132 chunks of 1024-thread CTAs).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-04-session59
TL=docs/bench/h200/probes/2026-12-02-session40/tl.py  # timelines: 3 calls after 256 MB fills
rm -rf /tmp/B && cp -r . /tmp/B && (cd /tmp/B && { patch -s -p1 < $P/fold_tree.patch \
  || git apply $P/fold_tree.patch; } && python3 tools/gen_kernel_build_json.py > /dev/null) \
  || exit 1
rm -rf /tmp/s59b && cp -r /tmp/B /tmp/s59b && (cd /tmp/s59b && python3 $P/apply_probe.py \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build6() {  # tree label jobs: the backward modules at H 1536, 2048, 4096, 12288
  build_matching $1 $2 $3 'miles_rmsnorm_bwd__h(1536|2048|4096|12288)(_|$)'
}
build6 . A 3 &
build6 /tmp/s59b B 3 &
(cd /tmp/B && build_tree 10)
wait
echo "builds $(( $(date +%s) - t0 )) s"
(cd /tmp/B && gpu_suite)
K="MEK_PROBE_BLOCK=1024 MEK_PROBE_MAX_CHUNKS=132"
(cd /tmp/s59b && timeout -s KILL 150 python3 $P/bits59.py \
  16384x2048,4096x2048,16384x4096,2077x1536,1024x4096,4096x12288 \
  "b1024:MEK_PROBE_BLOCK=1024,MEK_PROBE_MAX_CHUNKS=132" > $OUT/bits.txt 2>&1)
grep -c '^ok' $OUT/bits.txt; tail -1 $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
SH=16384x2048,16384x4096,65536x2048,65536x4096,4096x2048,4096x4096,16384x1536,1024x4096
rows_run bwd.txt A . plain bf16 $SH
rows_run bwd.txt B /tmp/s59b plain bf16 $SH
rows_run bwd.txt Bk /tmp/s59b plain bf16 $SH $K
rows_run bwd.txt Bk /tmp/s59b plain bf16 $SH $K
rows_run bwd.txt B /tmp/s59b plain bf16 $SH
rows_run bwd.txt A . plain bf16 $SH
echo "ab $(( $(date +%s) - t0 )) s"
for m in B Bk; do
  if [ $m = Bk ]; then E="$K"; else E="X=0"; fi
  (cd /tmp/s59b && env $E timeout -s KILL 60 python3 $TL 16384x2048,16384x4096,4096x4096 3 256 \
    2> $OUT/tl_$m.txt; python3 $P/tl59_summary.py $OUT/tl_$m.txt $m)
done
echo "timelines $(( $(date +%s) - t0 )) s"
for fw in "plain fp32" "residual bf16"; do
  rows_run bwd.txt A . $fw $SH
  rows_run bwd.txt B /tmp/s59b $fw $SH
  rows_run bwd.txt Bk /tmp/s59b $fw $SH $K
done
echo "ab2 $(( $(date +%s) - t0 )) s"
SK=16384x2048,16384x4096,4096x4096
rows_run skip.txt B /tmp/s59b plain bf16 $SK
rows_run skip.txt B_nofold /tmp/s59b plain bf16 $SK MEK_PROBE_SKIP=1
rows_run skip.txt B_nobar /tmp/s59b plain bf16 $SK MEK_PROBE_SKIP=2
echo "skip $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/bwd.txt
cut -c1-160 $OUT/skip.txt
