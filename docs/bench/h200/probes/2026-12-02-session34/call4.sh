#!/bin/bash
# Session 34, call 4: the residual backward's g_h loaded into registers before the row reduction
# (both rows together; working tree) against HEAD with the shared row end (vrowend). The harness
# on the residual rows (H 4096, 6144) and the plain T = 16384 rows, B V V B.
O=$OUT
mkdir -p $O/p
OUT=$O/p VARIANTS="vrowend" ONLY=bwd MODULES=miles_rmsnorm_bwd TIME_BUDGET=200 \
  SETS="4096,16384,65536:4096,6144:residual:bf16 16384:2048,4096,6144:plain:bf16" \
  bash docs/bench/h200/probes/2026-12-02-session32/variants.sh 2>&1 | tee $O/call4.txt
rm -rf $O/p
