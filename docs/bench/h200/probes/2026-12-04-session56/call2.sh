#!/bin/bash
# Session 56 call 2, on step 91's sources: (1) the harness, ours and Liger, at T 64 and 256 and
# H 256, 512 (plain, BF16 and FP32 weights), the rows step 91 moved (Liger 10-13% ahead at
# 256 x 256 and x 512 in session 55's call 5); (2) does a cluster of two CTAs a row (the split
# kernel, forced by MILES_EXT_KERNELS_SPLIT_ROWS=2 in one build) beat one CTA a row at T 33-64,
# H 4096-8192, where split_row_default never splits (fewer than 4 CTAs a row fit in the SMs, and
# two need 96 KB a row)? The residual 64 x 6144 sits at the 3 us line with one CTA a row.
# rows.py D 2 2 D, every family.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
fwd_build . W 16
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 64,256 \
  --hidden 256,512 --families plain --candidates ours,liger --ours-backends first_party \
  --no-plots --no-host-overhead --time-budget 150 --out /tmp/peers > /tmp/peers.log 2>&1 \
  || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
S=33x4096,48x4096,64x4096,33x6144,48x6144,64x6144,33x8192,48x8192,64x8192,48x5120,64x5120
S=$S,48x7168,64x7168
split_run D "" $S; split_run S2 2 $S; split_run S2 2 $S; split_run D "" $S
echo "ab $(( $(date +%s) - t0 )) s"
grep "^| H=" $OUT/peers.md
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
