#!/bin/bash
# Session 54 call 1: session 53's next.sh (three one-row backward candidates against HEAD at T = 1,
# bits first), with the candidates carried as overlays (prep.sh) and HEAD's tree the repository.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
rm -rf /tmp/head && cp -r . /tmp/head
# common.sh's overlay_tree since session 55 (the local copy it ran with took the overlays' own
# build.json; overlay_tree regenerates it from the same sources)
for v in s2 s3 s4; do overlay_tree $v; done
small /tmp/head A & small /tmp/s2 B & small /tmp/s3 C & small /tmp/s4 D & wait
echo "builds $(( $(date +%s) - t0 )) s"
export BWD_BITS_CALLS=1x200,1x256,1x512,1x896,1x1536,1x2048,1x2880,1x4096,16x256,64x2048
(cd /tmp/head && python3 $Q/bwd_bits.py save /tmp/bwd_bits.pt) 2>&1 | tail -1
for v in s2 s3 s4; do (cd /tmp/$v && python3 $Q/bwd_bits.py check /tmp/bwd_bits.pt) 2>&1 | tail -1; done
T1=1x256,1x512,1x1024,1x1536,1x2048,1x3072,1x4096
for pass in 1 2; do
  ab rows.txt bwd $T1 "plain fp32" "plain bf16" -- "/tmp/head A" "/tmp/s2 B" "/tmp/s3 C" "/tmp/s4 D"
done
ab rows.txt bwd 16x1024,64x1024 "plain fp32" -- "/tmp/head A" "/tmp/s4 D"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
