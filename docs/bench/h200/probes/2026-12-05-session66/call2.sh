#!/bin/bash
# Session 66 call 2 (prepared; about 4-5 minutes on an H200): what session 63's call1.sh left
# unmeasured once step 98's group_sync.patch was measured level (session 66, on an H100), without
# that patch's tree and GPU suite; then the one-CTA-an-SM backward with 66 CTAs in balanced waves
# (grid_waves.py), the launch session 66's reading favours for GPUs with fewer SMs.
#   /tmp/P = main + apply_probe63.py's stamps: timelines at 16384 x 2048, 65536 x 2048,
#   16384 x 4096, 4096 x 2048; the end phase's pieces (MEK_PROBE_SKIP 1: no fold; 2: no barrier
#   and no fold); A_d2 (a two-stage ring for the 1024-thread CTAs); torch.add on the same bytes.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session63
TL=docs/bench/h200/probes/2026-12-02-session40/tl.py
rm -rf /tmp/P && cp -r . /tmp/P \
  && (python3 $P/apply_probe63.py --apply-in /tmp/P && cd /tmp/P && python3 tools/gen_kernel_build_json.py > /dev/null) \
  || exit 1
build_matching . A 8 'miles_rmsnorm_bwd__h(2048|4096|6144)(_|$)' &
build_matching /tmp/P P 8 'miles_rmsnorm_bwd__h(2048|4096)(_|$)' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
timeout -s KILL 100 python3 $P/add_rows.py 16384x2048,16384x4096,65536x2048,65536x4096,4096x2048 \
  2>/dev/null | tee $OUT/add.txt
(cd /tmp/P && timeout -s KILL 90 python3 $TL 16384x2048,65536x2048,16384x4096,4096x2048 3 256 \
  2> $OUT/tl.txt; python3 $P/tl63_summary.py $OUT/tl.txt > $OUT/tl_summary.txt)
echo "timelines $(( $(date +%s) - t0 )) s"
SK=16384x2048,16384x4096,65536x2048
rows_run skip.txt A . plain bf16 $SK X=0
rows_run skip.txt P /tmp/P plain bf16 $SK X=0
rows_run skip.txt P_nofold /tmp/P plain bf16 $SK MEK_PROBE_SKIP=1
rows_run skip.txt P_nobar /tmp/P plain bf16 $SK MEK_PROBE_SKIP=2
rows_run skip.txt A_d2 . plain bf16 $SK MILES_EXT_KERNELS_SMEM_LIMIT=150000
rows_run skip.txt A . plain bf16 $SK X=0
echo "skips $(( $(date +%s) - t0 )) s"
timeout -s KILL 120 python3 docs/bench/h200/probes/2026-12-05-session65/grid_waves.py \
  16384x2048,65536x4096,16384x6144 none,114,78,66 2>&1 | grep -v -i warn | tee $OUT/grid66.txt
cat $OUT/tl_summary.txt
cut -c1-160 $OUT/skip.txt
