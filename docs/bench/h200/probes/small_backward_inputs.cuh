// A small-batch backward call's buffers for the probes (sessions 22 and 23): random BF16 rows of
// g and x (and g_h with a residual), a BF16 weight, rstd 0.7 + 0.01 * row, dx and dw, the FP64
// partials of `clusters` clusters and 64 zeroed counters; contiguous rows, no contract flags.
// Include it after the package's small-batch launcher (csrc/miles_rmsnorm_bwd_small_kernel.cu).
#pragma once
#include <cuda_runtime.h>
#include <vector>
#include "probe_inputs.cuh"  // dev_random

inline miles_rmsnorm::BackwardParams small_backward_inputs(int rows, int hidden, bool residual,
                                                           int clusters, int tpr) {
  const size_t bytes = (size_t)rows * hidden * 2;
  miles_rmsnorm::BackwardParams p{};
  p.g = dev_random(bytes, 1u + rows, false);
  p.x = dev_random(bytes, 2u + hidden, false);
  p.g_h = residual ? dev_random(bytes, 3u, false) : nullptr;
  p.w = dev_random(hidden * 2, 4u, true);
  std::vector<float> hr(rows);
  for (int i = 0; i < rows; ++i) hr[i] = 0.7f + 0.01f * i;
  float* r; cudaMalloc(&r, rows * 4); cudaMemcpy(r, hr.data(), rows * 4, cudaMemcpyHostToDevice);
  p.rstd = r;
  cudaMalloc(&p.dx, bytes);
  cudaMalloc(&p.dw, hidden * 4);
  cudaMalloc(&p.partial, (size_t)clusters * hidden * 8);
  cudaMalloc(&p.counters, 64 * 4); cudaMemset(p.counters, 0, 64 * 4);
  p.rows = rows; p.hidden = hidden; p.heads = 1;
  p.g_addr = {hidden, 0}; p.x_addr = {hidden, 0}; p.gh_addr = {hidden, 0};
  p.flags = residual ? miles_rmsnorm::kResidual : 0; p.tpr = tpr;
  return p;
}

inline void free_small_backward_inputs(const miles_rmsnorm::BackwardParams& p) {
  cudaFree((void*)p.g); cudaFree((void*)p.x); cudaFree((void*)p.g_h); cudaFree((void*)p.w);
  cudaFree((void*)p.rstd); cudaFree(p.dx); cudaFree(p.dw); cudaFree(p.partial); cudaFree(p.counters);
}

// dw of the package's launch of `p` at shape `s` (the probes' reference), and its status.
inline std::vector<float> package_dw(const miles_rmsnorm::BackwardParams& p,
                                     const miles_rmsnorm::SmallBackwardShape& s, cudaStream_t st,
                                     cudaError_t* status) {
  miles_rmsnorm_backward_small_launch(&p, &s, miles_rmsnorm::kBF16, miles_rmsnorm::kBF16, st);
  *status = cudaDeviceSynchronize();
  std::vector<float> dw(p.hidden);
  cudaMemcpy(dw.data(), p.dw, p.hidden * 4, cudaMemcpyDeviceToHost);
  return dw;
}
