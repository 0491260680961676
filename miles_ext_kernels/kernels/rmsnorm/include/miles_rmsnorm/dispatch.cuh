// miles-ext-kernels first-party RMSNorm: pick the template instance for (x dtype, w dtype, vpt).
#pragma once

#include "miles_rmsnorm/params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace miles_rmsnorm {

// The vectors-per-thread values a program is instantiated for (each program lists the values
// its launch-shape table in config.h can produce).
template <int... VPTS>
struct VptList {};

using ForwardVpts = VptList<1, 2>;
using BackwardVpts = VptList<1, 4>;

template <typename XT, typename WT, typename Fn, int... VPTS>
cudaError_t dispatch_vpt(int vpt, Fn&& fn, VptList<VPTS...>) {
  cudaError_t status = cudaErrorInvalidValue;
  // The first (only) matching instance runs; no match leaves cudaErrorInvalidValue.
  (void)((vpt == VPTS ? (status = fn.template operator()<XT, WT, VPTS>(), true) : false) || ...);
  return status;
}

// Calls fn.template operator()<XT, WT, VPT>() for the supported combination and returns
// cudaErrorInvalidValue for any other.
template <typename Vpts, typename Fn>
cudaError_t dispatch_types(int x_dtype, int w_dtype, int vpt, Fn&& fn) {
  if (x_dtype == kBF16 && w_dtype == kBF16) {
    return dispatch_vpt<__nv_bfloat16, __nv_bfloat16>(vpt, fn, Vpts{});
  }
  if (x_dtype == kBF16 && w_dtype == kFP32) {
    return dispatch_vpt<__nv_bfloat16, float>(vpt, fn, Vpts{});
  }
  if (x_dtype == kFP16 && w_dtype == kFP16) return dispatch_vpt<__half, __half>(vpt, fn, Vpts{});
  if (x_dtype == kFP16 && w_dtype == kFP32) return dispatch_vpt<__half, float>(vpt, fn, Vpts{});
  return cudaErrorInvalidValue;
}

}  // namespace miles_rmsnorm
