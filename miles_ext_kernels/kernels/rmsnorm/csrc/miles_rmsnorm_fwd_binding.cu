// miles-ext-kernels first-party RMSNorm forward program: tvm-ffi entry point `run`.
#include "miles_rmsnorm/ffi_args.h"

extern "C" cudaError_t miles_rmsnorm_forward_launch(const miles_rmsnorm::ForwardParams* p,
                                                    int x_dtype, int w_dtype, int vpt,
                                                    unsigned int grid_x, unsigned int block,
                                                    cudaStream_t stream);

namespace miles_rmsnorm {

void RunForward(TensorView x, TensorView u, TensorView w, TensorView y, TensorView h_new,
                TensorView r, int64_t rows, int64_t hidden, int64_t heads, int64_t x_stride,
                int64_t x_head_stride, int64_t u_stride, int64_t u_head_stride, double eps,
                int64_t flags, int64_t grid_x, int64_t grid_y, int64_t grid_z) {
  const int device_id = x.device().device_id;
  tvm::ffi::CUDADeviceGuard guard(device_id);
  require_hidden(hidden);
  require_rows(rows, heads);
  require_grid(grid_x, grid_y, grid_z);
  const bool residual = (flags & kResidual) != 0;
  const int x_dtype = activation_dtype(x, "x");
  const int w_dtype = weight_dtype(w, x_dtype);
  require_cuda(x, "x", device_id);
  require_cuda(w, "w", device_id);
  require_cuda(y, "y", device_id);
  require_cuda(r, "r", device_id);
  require_same_dtype(y, x, "y");
  require_dtype(r, kDLFloat, 32, "r", "float32");
  require_contiguous_numel(w, hidden, "w");
  require_contiguous_numel(y, rows * hidden, "y");
  require_contiguous_numel(r, rows, "r");
  require_aligned(x, 16, "x");
  require_aligned(w, 16, "w");
  require_aligned(y, 16, "y");
  require_row_strides(x_stride, x_head_stride, "x");
  if (residual) {
    require_cuda(u, "u", device_id);
    require_cuda(h_new, "h_new", device_id);
    require_same_dtype(u, x, "u");
    require_same_dtype(h_new, x, "h_new");
    require_contiguous_numel(h_new, rows * hidden, "h_new");
    require_aligned(u, 16, "u");
    require_aligned(h_new, 16, "h_new");
    require_row_strides(u_stride, u_head_stride, "u");
  }
  const RowConfig cfg = forward_config(hidden);
  ForwardParams p{};
  p.x = data_of(x);
  p.u = residual ? data_of(u) : nullptr;
  p.w = data_of(w);
  p.y = data_of(y);
  p.h_new = residual ? data_of(h_new) : nullptr;
  p.rstd = static_cast<float*>(data_of(r));
  p.rows = rows;
  p.hidden = hidden;
  p.heads = heads;
  p.x_addr = RowAddress{x_stride, x_head_stride};
  p.u_addr = RowAddress{u_stride, u_head_stride};
  p.eps = static_cast<float>(eps);
  p.flags = static_cast<int>(flags);
  p.tpr = cfg.tpr;
  p.groups = cfg.groups;
  p.group_magic = division_magic(cfg.tpr);
  const RowDivision per_head = row_division(heads);
  p.head_magic = per_head.magic;
  p.head_shift = per_head.shift;
  const cudaError_t status =
      miles_rmsnorm_forward_launch(&p, x_dtype, w_dtype, cfg.vpt, static_cast<unsigned>(grid_x),
                                   static_cast<unsigned>(cfg.block), current_stream(x));
  TVM_FFI_CHECK(status == cudaSuccess, RuntimeError)
      << "miles_rmsnorm forward launch failed: " << cudaGetErrorString(status);
}

}  // namespace miles_rmsnorm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, miles_rmsnorm::RunForward);
