#!/bin/bash
# Session 33, call 6: the GPU suite on the working tree (FP32 weights with the rows at H <= 256
# past the small batches), then it against HEAD (vlate) at 4096-65536 x 256, FP32 weights.
O=$OUT
mkdir -p $O/p
OUT=$O/p SUITE=1 VARIANTS="vlate" SETS="16384,65536:256:plain:fp32 4096:256:plain:fp32" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call6.txt
mv $O/p/suite.log $O/suite.log 2>/dev/null
rm -rf $O/p
