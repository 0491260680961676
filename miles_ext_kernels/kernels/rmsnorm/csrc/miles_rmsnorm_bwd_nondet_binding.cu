// miles-ext-kernels first-party RMSNorm non-deterministic backward program: tvm-ffi entry `run`.
#include "miles_rmsnorm/backward_args.h"

extern "C" cudaError_t miles_rmsnorm_backward_atomic_launch(const miles_rmsnorm::BackwardParams* p,
                                                            int x_dtype, int w_dtype, int vpt,
                                                            unsigned int grid_x,
                                                            unsigned int block,
                                                            cudaStream_t stream);

namespace miles_rmsnorm {

void RunBackwardAtomic(TensorView g, TensorView x, TensorView w, TensorView r, TensorView dx,
                       TensorView dw, TensorView g_h, int64_t rows, int64_t hidden,
                       int64_t heads, int64_t g_stride, int64_t g_head_stride, int64_t x_stride,
                       int64_t x_head_stride, int64_t gh_stride, int64_t gh_head_stride,
                       int64_t flags, int64_t grid_x, int64_t grid_y, int64_t grid_z) {
  tvm::ffi::CUDADeviceGuard guard(x.device().device_id);
  require_grid(grid_x, grid_y, grid_z);
  BackwardParams p{};
  const BackwardTypes t =
      fill_backward_params(p, g, x, w, r, dx, dw, g_h, rows, hidden, heads, g_stride,
                           g_head_stride, x_stride, x_head_stride, gh_stride, gh_head_stride,
                           flags);
  const cudaError_t status = miles_rmsnorm_backward_atomic_launch(
      &p, t.x_dtype, t.w_dtype, t.cfg.vpt, static_cast<unsigned>(grid_x),
      static_cast<unsigned>(t.cfg.block), current_stream(x));
  TVM_FFI_CHECK(status == cudaSuccess, RuntimeError)
      << "miles_rmsnorm atomic backward launch failed: " << cudaGetErrorString(status)
      << backward_launch_hint(status, hidden);
}

}  // namespace miles_rmsnorm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, miles_rmsnorm::RunBackwardAtomic);
