#!/bin/bash
# Session 58 call 3: step 95 (the deterministic backward's chunks as rows dealt in turn) in the
# working tree: its GPU suite, the atomic program against it (nondet.py); in .device/contig (the
# working tree with probe switches: MEK_PROBE_CONTIG main's contiguous chunks, MEK_PROBE_NOKEEP no
# evict_last instance, MEK_PROBE_FORCEKEEP the evict_last instance at every plain call of one
# vector a thread) the evict_last rule re-measured over the new partition.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=$(pwd)/docs/bench/h200/probes/2026-12-04-session58
source $P/modes.sh
overlay_tree contig
bwd_build /tmp/contig C & build_tree 12; wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 150 python3 $P/nondet.py \
  16384x2048,65536x4096,65536x8192,32768x8192,16384x8192,4096x16384,16384x16384,16384x12288 \
  2>/dev/null | tee $OUT/nondet.txt
echo "nondet $(( $(date +%s) - t0 )) s"
cd /tmp/contig
K=65536x4096,65536x8192,32768x8192,32768x4096,16384x8192,16384x4096,16384x2048,65536x2048
envs keep.txt plain bf16 $K "rule X=1" "nokeep MEK_PROBE_NOKEEP=1" "force MEK_PROBE_FORCEKEEP=1" \
  "force MEK_PROBE_FORCEKEEP=1" "nokeep MEK_PROBE_NOKEEP=1" "rule X=1"
echo "keep $(( $(date +%s) - t0 )) s"
python3 /tmp/contig/docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/keep.txt
