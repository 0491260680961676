// miles-ext-kernels first-party RMSNorm: pick the template instance for (x dtype, w dtype, vpt).
#pragma once

#include "miles_rmsnorm/params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace miles_rmsnorm {

// Calls fn.template operator()<XT, WT, VPT>() for the supported combination and returns
// cudaErrorInvalidValue for any other.
template <typename Fn>
cudaError_t dispatch_types(int x_dtype, int w_dtype, int vpt, Fn&& fn) {
#define MILES_RMSNORM_VPT(XT, WT)                                   \
  switch (vpt) {                                                    \
    case 1: return fn.template operator()<XT, WT, 1>();              \
    case 2: return fn.template operator()<XT, WT, 2>();              \
    default: return cudaErrorInvalidValue;                          \
  }
  if (x_dtype == kBF16 && w_dtype == kBF16) { MILES_RMSNORM_VPT(__nv_bfloat16, __nv_bfloat16) }
  if (x_dtype == kBF16 && w_dtype == kFP32) { MILES_RMSNORM_VPT(__nv_bfloat16, float) }
  if (x_dtype == kFP16 && w_dtype == kFP16) { MILES_RMSNORM_VPT(__half, __half) }
  if (x_dtype == kFP16 && w_dtype == kFP32) { MILES_RMSNORM_VPT(__half, float) }
#undef MILES_RMSNORM_VPT
  return cudaErrorInvalidValue;
}

}  // namespace miles_rmsnorm
