#!/bin/bash
# Session 33, call 1: the GPU suite on the working tree (HEAD + the two-row threshold), then the
# backward with an L2 prefetch hint on every cp.async (vb256: L2::256B, vb128: L2::128B) against
# the working tree, B V V B per set. Tables to stdout and $OUT/call1.txt.
O=$OUT
mkdir -p $O/p
OUT=$O/p SUITE=1 ONLY=bwd MODULES=miles_rmsnorm_bwd VARIANTS="vb256 vb128" \
  SETS="16384:2048,4096,6144,8192:plain:bf16 1024,65536:2048,4096:plain:bf16" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call1.txt
mv $O/p/suite.log $O/suite.log 2>/dev/null
rm -rf $O/p
