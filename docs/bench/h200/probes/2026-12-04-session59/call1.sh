#!/bin/bash
# Session 59 call 1: the deterministic backward's end phase and one CTA an SM, in one probe build
# (/tmp/s59: main with apply_probe.py's hooks: per-CTA stamps, MEK_PROBE_SKIP, MEK_PROBE_BLOCK and
# MEK_PROBE_MAX_CHUNKS; the run laid the same hooks over main as an overlay, .device/s59).
# "b1024": 132 chunks of 1024-thread CTAs (one an SM) instead of 264 of 512.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-04-session59
TL=docs/bench/h200/probes/2026-12-02-session40/tl.py  # timelines: 3 calls after 256 MB fills
rm -rf /tmp/s59 && cp -r . /tmp/s59 && (cd /tmp/s59 && python3 $P/apply_probe.py \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/s59 S 16 'miles_rmsnorm_bwd__h(1536|2048|4096)(_|$)'
echo "build $(( $(date +%s) - t0 )) s"
cd /tmp/s59
B="MEK_PROBE_BLOCK=1024 MEK_PROBE_MAX_CHUNKS=132"
timeout -s KILL 150 python3 $P/bits59.py 16384x2048,4096x2048,16384x4096,2077x1536 \
  "b1024:MEK_PROBE_BLOCK=1024,MEK_PROBE_MAX_CHUNKS=132" 2>&1 | tee $OUT/bits.txt | grep -c ok
tail -1 $OUT/bits.txt
echo "bits $(( $(date +%s) - t0 )) s"
for m in base b1024; do
  if [ $m = b1024 ]; then E="$B"; else E="X=0"; fi
  env $E timeout -s KILL 60 python3 $TL 16384x2048,16384x4096,65536x2048 3 256 2> $OUT/tl_$m.txt
  python3 $P/tl59_summary.py $OUT/tl_$m.txt $m
done
echo "timelines $(( $(date +%s) - t0 )) s"
SH=16384x2048,16384x4096,65536x2048,65536x4096,4096x2048,4096x4096,16384x1536
envs bwd.txt plain bf16 $SH "A X=0" "B $B" "B $B" "A X=0"
envs bwd.txt plain fp32 $SH "A X=0" "B $B"
envs bwd.txt residual bf16 $SH "A X=0" "B $B"
echo "ab $(( $(date +%s) - t0 )) s"
SK=16384x2048,16384x4096,65536x2048
envs skip.txt plain bf16 $SK "A X=0" "A_nofold MEK_PROBE_SKIP=1" "A_nobar MEK_PROBE_SKIP=2" \
  "B $B" "B_nofold $B MEK_PROBE_SKIP=1" "B_nobar $B MEK_PROBE_SKIP=2"
echo "skip $(( $(date +%s) - t0 )) s"
cd - > /dev/null
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/bwd.txt
cat $OUT/skip.txt | sed 's/ {/\n   {/' | cut -c1-200
