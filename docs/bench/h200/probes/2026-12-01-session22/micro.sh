#!/bin/bash
# Build and run a micro-benchmark: .device/micro.sh NAME (source .device/micro/NAME.cu)
cd miles_ext_kernels/kernels/rmsnorm
nvcc -gencode=arch=compute_90a,code=sm_90a --prec-div=true --prec-sqrt=true --ftz=false -std=c++17 -O3 -Iinclude -o /tmp/$1 ../../../.device/micro/$1.cu || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
/tmp/$1 | tee $OUT/$1.txt
