#!/bin/bash
# Session 63 call 1 (prepared; not run: no device was lent in session 63). Self-contained.
# Where the deterministic backward's time goes at 16384 x 2048 after steps 96-97, and one change
# meant to keep every bit:
#   /tmp/P = main + apply_probe63.py's stamps (timelines: entry, weights staged, first and last
#            iteration's rows landed, rows done, partial, barrier, fold);
#   /tmp/N = main + group_sync.patch (a row group's reduction waits on its own named barrier,
#            not the CTA's: the four row groups of a 1024-thread CTA no longer wait for each
#            other every iteration).
# Then: dx / dw bits of N against main (bits63.py), torch.add of the same bytes (add_rows.py),
# the timelines, the end phase's pieces (P with
# its fold or barrier skipped) and a two-stage ring for one CTA an SM (A_d2), rows.py A N N A
# (plain BF16), A N (FP32 weights, residual), and the GPU suite on N (every module built).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session63
TL=docs/bench/h200/probes/2026-12-02-session40/tl.py
rm -rf /tmp/P /tmp/N && cp -r . /tmp/P && cp -r . /tmp/N \
  && (python3 $P/apply_probe63.py --apply-in /tmp/P && cd /tmp/P && python3 tools/gen_kernel_build_json.py > /dev/null) \
  && (cd /tmp/N && git apply $P/group_sync.patch && python3 tools/gen_kernel_build_json.py > /dev/null) \
  || exit 1
build_matching . A 2 'miles_rmsnorm_bwd__h(2048|4096|8192|12288)(_|$)' &
build_matching /tmp/P P 2 'miles_rmsnorm_bwd__h(2048|4096)(_|$)' &
(cd /tmp/N && build_tree 11) &
wait
echo "builds $(( $(date +%s) - t0 )) s"
BITS=16384x2048,4096x4096,16384x12288,1000x2048,64x8192
timeout -s KILL 60 python3 $P/bits63.py dump /tmp/bits_A.pt $BITS 2>&1 | tail -1
(cd /tmp/N && timeout -s KILL 60 python3 $P/bits63.py dump /tmp/bits_N.pt $BITS 2>&1 | tail -1)
python3 $P/bits63.py cmp /tmp/bits_A.pt /tmp/bits_N.pt > $OUT/bits.txt 2>&1; tail -1 $OUT/bits.txt
timeout -s KILL 100 python3 $P/add_rows.py 16384x2048,16384x4096,65536x2048,65536x4096,4096x2048 \
  2>/dev/null | tee $OUT/add.txt
(cd /tmp/P && timeout -s KILL 90 python3 $TL 16384x2048,65536x2048,16384x4096,4096x2048 3 256 \
  2> $OUT/tl.txt; python3 $P/tl63_summary.py $OUT/tl.txt > $OUT/tl_summary.txt)
echo "timelines $(( $(date +%s) - t0 )) s"
# The end phase after steps 96-97 (session 59's skips: no fold; no barrier and no fold), and a
# ring of two stages for the 1024-thread CTAs (a 150000-byte cap leaves the 512-thread ones three).
SK=16384x2048,16384x4096,65536x2048
rows_run skip.txt A . plain bf16 $SK X=0
rows_run skip.txt P /tmp/P plain bf16 $SK X=0
rows_run skip.txt P_nofold /tmp/P plain bf16 $SK MEK_PROBE_SKIP=1
rows_run skip.txt P_nobar /tmp/P plain bf16 $SK MEK_PROBE_SKIP=2
rows_run skip.txt A_d2 . plain bf16 $SK MILES_EXT_KERNELS_SMEM_LIMIT=150000
rows_run skip.txt A . plain bf16 $SK X=0
SH=16384x2048,16384x4096,65536x2048,65536x4096,4096x2048,4096x4096,65536x8192,16384x12288
for m in A N N A; do
  case $m in A) tree=.;; *) tree=/tmp/$m;; esac
  rows_run bwd.txt $m $tree plain bf16 $SH
done
for fw in "plain fp32" "residual bf16"; do
  rows_run bwd.txt A . $fw $SH
  rows_run bwd.txt N /tmp/N $fw $SH
done
echo "ab $(( $(date +%s) - t0 )) s"
(cd /tmp/N && gpu_suite)
cat $OUT/tl_summary.txt
cat $OUT/skip.txt | cut -c1-160
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/bwd.txt
