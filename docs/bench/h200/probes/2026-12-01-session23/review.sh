#!/bin/bash
# Session 23, call 9: the probes refactored in review build and run (stream_micro; tail_micro
# with make_tail.py), from the repository root.
set -e
mkdir -p /tmp/gen
python3 docs/bench/h200/probes/2026-12-01-session23/make_tail.py /tmp/gen/tail_stamped.cuh
cd miles_ext_kernels/kernels/rmsnorm
F="-gencode=arch=compute_90a,code=sm_90a --prec-div=true --prec-sqrt=true --ftz=false -std=c++17 -O3 -Iinclude -I/tmp/gen"
nvcc $F -o /tmp/sm ../../../docs/bench/h200/probes/2026-12-01-session22/stream_micro.cu &
nvcc $F -o /tmp/tm ../../../docs/bench/h200/probes/2026-12-01-session23/tail_micro.cu &
wait
/tmp/sm | tee $OUT/stream_micro.txt | grep -c same
/tmp/tm | tee $OUT/tail_micro.txt | grep -v "^ *[0-9]" | cut -c1-110
