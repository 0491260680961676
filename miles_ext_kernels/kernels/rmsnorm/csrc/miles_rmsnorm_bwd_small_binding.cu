// miles-ext-kernels first-party RMSNorm small-batch deterministic backward program: tvm-ffi
// entry `run`.
#include "miles_rmsnorm/backward_args.h"

extern "C" cudaError_t miles_rmsnorm_backward_small_launch(
    const miles_rmsnorm::BackwardParams* p, const miles_rmsnorm::SmallBackwardShape* shape,
    int x_dtype, int w_dtype, cudaStream_t stream);

namespace miles_rmsnorm {

// grid_x is the cluster the package's fixed grid rule names (the largest, 16 CTAs at most); the
// binding derives the same cluster from the hidden size and refuses any other. The launcher runs
// as many clusters as the rows need (small_backward_shape); where the device cannot place the
// cluster, at most 8 CTAs a cluster over the same row partition: dw does not depend on the
// cluster size either way. Several clusters fold dw through `partial` (FP64, at least
// clusters x hidden) and `counters` (uint32, one a column slice, zero between calls).
void RunBackwardSmall(TensorView g, TensorView x, TensorView w, TensorView r, TensorView dx,
                      TensorView dw, TensorView partial, TensorView counters, TensorView g_h,
                      int64_t rows, int64_t hidden, int64_t heads,
                      int64_t g_stride, int64_t g_head_stride, int64_t x_stride,
                      int64_t x_head_stride, int64_t gh_stride, int64_t gh_head_stride,
                      int64_t flags, int64_t grid_x, int64_t grid_y, int64_t grid_z) {
  tvm::ffi::CUDADeviceGuard guard(x.device().device_id);
  require_grid(grid_x, grid_y, grid_z);
  BackwardParams p{};
  const BackwardTypes t =
      fill_backward_params(p, g, x, w, r, dx, dw, g_h, rows, hidden, heads, g_stride,
                           g_head_stride, x_stride, x_head_stride, gh_stride, gh_head_stride,
                           flags);
  TVM_FFI_CHECK(small_backward_supported(hidden), ValueError)
      << "the small-batch backward serves hidden sizes up to 8192, got " << hidden;
  const SmallBackwardShape shape = small_backward_shape(rows, hidden);
  TVM_FFI_CHECK(grid_x == shape.ctas, ValueError)
      << "the small-batch backward runs clusters of " << shape.ctas << " CTAs at hidden "
      << hidden << "; got grid " << grid_x;
  if (shape.clusters > 1) {
    require_cuda(partial, "partial", x.device().device_id);
    require_cuda(counters, "counters", x.device().device_id);
    require_dtype(partial, kDLFloat, 64, "partial", "float64");
    require_dtype(counters, kDLUInt, 32, "counters", "uint32");
    require_contiguous_numel(partial, static_cast<int64_t>(shape.clusters) * hidden, "partial");
    require_contiguous_numel(counters, shape.ctas, "counters");
    p.partial = static_cast<double*>(data_of(partial));
    p.counters = static_cast<unsigned int*>(data_of(counters));
  }
  const cudaError_t status =
      miles_rmsnorm_backward_small_launch(&p, &shape, t.x_dtype, t.w_dtype, current_stream(x));
  TVM_FFI_CHECK(status == cudaSuccess, RuntimeError)
      << "miles_rmsnorm small-batch backward launch failed: " << cudaGetErrorString(status);
}

}  // namespace miles_rmsnorm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, miles_rmsnorm::RunBackwardSmall);
