#!/bin/bash
# Session 46, call 3: BF16 widened by moving bits in every forward kernel (V: .device/V46, the
# working tree with unpack<bf16> specialised as widen, widen_all.patch) against the working tree
# (N: the fixed kernels only), streaming rows, in session 41's rows.py (the harness's engine);
# N V V N N V. Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree V46 || exit 1
fwd_build /tmp/V46 V & fwd_build . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
P="4096x256,16384x256,65536x256,4096x512,16384x512,65536x512,16384x1536,16384x2048,16384x4096"
for pair in ". N" "/tmp/V46 V" "/tmp/V46 V" ". N" ". N" "/tmp/V46 V"; do
  ab rows.txt fwd $P "plain bf16" -- "$pair"
  ab rows.txt fwd 16384x256,65536x512,16384x2048,16384x4096 "residual bf16" -- "$pair"
  ab rows.txt fwd 16384x256,65536x512,16384x2048 "plain fp32" -- "$pair"
  echo "$pair $(( $(date +%s) - t0 )) s"
done
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
