#!/bin/bash
# Session 50 call 5: the kept sources (forward_fixed_rows from 257 rows): every module and the
# GPU suite.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
