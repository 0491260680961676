// miles-ext-kernels first-party RMSNorm deterministic backward program: tvm-ffi entry `run`.
#include "miles_rmsnorm/backward_args.h"

extern "C" cudaError_t miles_rmsnorm_backward_launch(const miles_rmsnorm::BackwardParams* p,
                                                     int x_dtype, int w_dtype, int vpt,
                                                     unsigned int grid_x, unsigned int block,
                                                     cudaStream_t stream,
                                                     unsigned int* launched_grid);

namespace miles_rmsnorm {

void RunBackward(TensorView g, TensorView x, TensorView w, TensorView r, TensorView dx,
                 TensorView dw, TensorView partial, TensorView counters, TensorView g_h,
                 int64_t rows, int64_t hidden, int64_t heads, int64_t g_stride,
                 int64_t g_head_stride, int64_t x_stride, int64_t x_head_stride,
                 int64_t gh_stride, int64_t gh_head_stride, int64_t n_chunks,
                 int64_t rows_per_chunk, int64_t flags, int64_t grid_x, int64_t grid_y,
                 int64_t grid_z) {
  tvm::ffi::CUDADeviceGuard guard(x.device().device_id);
  require_grid(grid_x, grid_y, grid_z);
  BackwardParams p{};
  const BackwardTypes t =
      fill_backward_params(p, g, x, w, r, dx, dw, g_h, rows, hidden, heads, g_stride,
                           g_head_stride, x_stride, x_head_stride, gh_stride, gh_head_stride,
                           flags);
  TVM_FFI_CHECK(n_chunks > 0 && rows_per_chunk == (rows + n_chunks - 1) / n_chunks, ValueError)
      << "inconsistent chunking: " << n_chunks << " chunks of " << rows_per_chunk << " rows for "
      << rows << " rows";
  if (n_chunks > 1) {
    require_cuda(partial, "partial", x.device().device_id);
    require_cuda(counters, "counters", x.device().device_id);
    require_dtype(partial, kDLFloat, 64, "partial", "float64");
    require_dtype(counters, kDLUInt, 32, "counters", "uint32");
    require_contiguous_numel(partial, n_chunks * hidden, "partial");
    require_contiguous_numel(counters, 2, "counters");
    require_aligned(partial, 16, "partial");
    p.partial = static_cast<double*>(data_of(partial));
    p.counters = static_cast<unsigned int*>(data_of(counters));
  }
  p.n_chunks = n_chunks;
  p.rows_per_chunk = rows_per_chunk;
  const unsigned int grid = static_cast<unsigned int>(grid_x < n_chunks ? grid_x : n_chunks);
  const int large = backward_large_block(t.cfg, rows, n_chunks);
  const int block = large > 0 ? large : backward_chunk_block(t.cfg, rows_per_chunk);
  const cudaError_t status = miles_rmsnorm_backward_launch(
      &p, t.x_dtype, t.w_dtype, t.cfg.vpt, grid, static_cast<unsigned>(block),
      current_stream(x), nullptr);
  TVM_FFI_CHECK(status == cudaSuccess, RuntimeError)
      << "miles_rmsnorm deterministic backward launch failed: " << cudaGetErrorString(status)
      << backward_launch_hint(status, hidden);
}

}  // namespace miles_rmsnorm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, miles_rmsnorm::RunBackward);
