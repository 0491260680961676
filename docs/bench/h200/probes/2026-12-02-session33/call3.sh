#!/bin/bash
# Session 33, call 3: more rows a group past the spread window at 40 registers (CTAs of 256
# threads, six an SM): vr4 four rows a group at H <= 256 and two at H 264-512; vr3 three and two.
# Against the working tree (two and one at 32 registers). Tables to stdout and $OUT/call3.txt.
O=$OUT
mkdir -p $O/p
OUT=$O/p VARIANTS="vr4 vr3" \
  SETS="16384,65536:256,512:plain:bf16,fp32 4096,16384:256:per_head_contig,per_head_strided:bf16" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call3.txt
rm -rf $O/p
