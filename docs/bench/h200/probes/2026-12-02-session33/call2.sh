#!/bin/bash
# Session 33, call 2: the forward with two rows a group only from 16384 rows (the working tree)
# against HEAD (v0: two rows a group at every T past the spread window, H <= 256).
O=$OUT
mkdir -p $O/p
OUT=$O/p VARIANTS="v0" \
  SETS="4096,8192,16384,65536:256:plain:bf16,fp32 2048,4096,16384:256:per_head_contig,per_head_strided:bf16" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call2.txt
rm -rf $O/p
