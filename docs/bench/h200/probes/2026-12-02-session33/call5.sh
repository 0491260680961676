#!/bin/bash
# Session 33, call 5: FP32 weights loaded with the rows (not after the row reduction) where a
# thread holds one vector (H <= 256), past the small batches: vew against the working tree.
O=$OUT
mkdir -p $O/p
OUT=$O/p VARIANTS="vew" SETS="1024,4096,16384,65536:256:plain:fp32" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call5.txt
rm -rf $O/p
