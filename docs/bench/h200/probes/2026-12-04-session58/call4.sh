#!/bin/bash
# Session 58 call 4: in .device/contig (call 3's build, rebuilt if the machine is fresh), main's
# contiguous chunks (MEK_PROBE_CONTIG) against step 95's rows dealt in turn for the residual form,
# per-head views (phs: [T, 24 of 32, D]) and four vectors a thread (H > 8192), B A A B.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-04-session58
source $P/modes.sh
[ -d /tmp/contig ] || overlay_tree contig
bwd_build /tmp/contig C
echo "builds $(( $(date +%s) - t0 )) s"
cd /tmp/contig
R=16384x2048,16384x4096,65536x4096,16384x6144,4096x4096
H=2048x128,1024x256,4096x256,1024x512
V=16384x12288,16384x16384,4096x16384,32768x16384,1024x16384
for f in "residual bf16 $R" "phs bf16 $H" "plain bf16 $V"; do
  envs fam.txt $f "contig MEK_PROBE_CONTIG=1" "dealt X=1" "dealt X=1" "contig MEK_PROBE_CONTIG=1"
done
echo "families $(( $(date +%s) - t0 )) s"
python3 /tmp/contig/docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/fam.txt
