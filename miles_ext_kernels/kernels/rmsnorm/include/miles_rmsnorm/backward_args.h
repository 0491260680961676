// miles-ext-kernels first-party RMSNorm: checks and parameter block shared by the three backward
// bindings (deterministic, small-batch, atomic).
#pragma once

#include <string>

#include "miles_rmsnorm/ffi_args.h"

namespace miles_rmsnorm {

// What a failed backward launch adds to its CUDA error: the hidden size, where the launcher found
// no ring that fits the GPU's shared memory (cudaErrorLaunchOutOfResources).
inline std::string backward_launch_hint(cudaError_t status, int64_t hidden) {
  if (status != cudaErrorLaunchOutOfResources) return std::string();
  return " (hidden " + std::to_string(hidden) +
         " needs more shared memory per CTA than this GPU allows, even with a one-stage ring)";
}

struct BackwardTypes {
  int x_dtype;
  int w_dtype;
  RowConfig cfg;
};

inline BackwardTypes fill_backward_params(BackwardParams& p, TensorView g, TensorView x,
                                          TensorView w, TensorView r, TensorView dx,
                                          TensorView dw, TensorView g_h, int64_t rows,
                                          int64_t hidden, int64_t heads, int64_t g_stride,
                                          int64_t g_head_stride, int64_t x_stride,
                                          int64_t x_head_stride, int64_t gh_stride,
                                          int64_t gh_head_stride, int64_t flags) {
  const int device_id = x.device().device_id;
  require_hidden(hidden);
  require_rows(rows, heads);
  TVM_FFI_CHECK(rows <= INT64_C(1) << 30, ValueError)
      << "the backward indexes rows in 32 bits: at most 2^30 rows, got " << rows;
  const bool residual = (flags & kResidual) != 0;
  const int x_dtype = activation_dtype(x, "x");
  const int w_dtype = weight_dtype(w, x_dtype);
  require_cuda(g, "g", device_id);
  require_cuda(x, "x", device_id);
  require_cuda(w, "w", device_id);
  require_cuda(r, "r", device_id);
  require_cuda(dx, "dx", device_id);
  require_cuda(dw, "dw", device_id);
  require_same_dtype(g, x, "g");
  require_same_dtype(dx, x, "dx");
  require_dtype(r, kDLFloat, 32, "r", "float32");
  require_dtype(dw, kDLFloat, 32, "dw", "float32");
  require_contiguous_numel(w, hidden, "w");
  require_contiguous_numel(r, rows, "r");
  require_contiguous_numel(dx, rows * hidden, "dx");
  require_contiguous_numel(dw, hidden, "dw");
  require_aligned(g, 16, "g");
  require_aligned(x, 16, "x");
  require_aligned(w, 16, "w");
  require_aligned(dx, 16, "dx");
  require_row_strides(g_stride, g_head_stride, "g");
  require_row_strides(x_stride, x_head_stride, "x");
  if (residual) {
    require_cuda(g_h, "g_h", device_id);
    require_same_dtype(g_h, x, "g_h");
    require_aligned(g_h, 16, "g_h");
    require_row_strides(gh_stride, gh_head_stride, "g_h");
  }
  const RowConfig cfg = backward_config(hidden);
  p.g = data_of(g);
  p.x = data_of(x);
  p.w = data_of(w);
  p.rstd = static_cast<const float*>(data_of(r));
  p.g_h = residual ? data_of(g_h) : nullptr;
  p.dx = data_of(dx);
  p.dw = static_cast<float*>(data_of(dw));
  p.partial = nullptr;
  p.counters = nullptr;
  p.rows = rows;
  p.hidden = hidden;
  p.heads = heads;
  p.g_addr = RowAddress{g_stride, g_head_stride};
  p.x_addr = RowAddress{x_stride, x_head_stride};
  p.gh_addr = RowAddress{gh_stride, gh_head_stride};
  p.n_chunks = 1;
  p.rows_per_chunk = rows;
  p.flags = static_cast<int>(flags) & ~kClusterFold;  // the launcher's to set
  p.tpr = cfg.tpr;
  return BackwardTypes{x_dtype, w_dtype, cfg};
}

}  // namespace miles_rmsnorm
