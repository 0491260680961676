// miles-ext-kernels first-party RMSNorm non-deterministic backward program (FP32 atomics into
// dw): device code and its host launcher. dw accumulates into the caller's buffer, which the
// caller zeroes first on the same stream (the runtime does so for every atomic route).
#include <cuda_runtime.h>

#include "miles_rmsnorm/backward.cuh"
#include "miles_rmsnorm/dispatch.cuh"

namespace {

struct AtomicLaunch {
  const miles_rmsnorm::BackwardParams* p;
  dim3 grid;
  dim3 block;
  cudaStream_t stream;

  template <typename XT, typename WT, int VPT>
  cudaError_t operator()() const {
    int device = 0;
    const cudaError_t status = cudaGetDevice(&device);
    if (status != cudaSuccess) return status;
    auto bytes = [&](int stages) {
      return miles_rmsnorm::atomic_smem_bytes(VPT, miles_rmsnorm::backward_rows_per_group(VPT),
                                              static_cast<int>(block.x), stages);
    };
    return miles_rmsnorm::launch_deepest_ring<VPT>(device, bytes, [&](auto stages, size_t smem,
                                                                 size_t /*limit*/) {
      constexpr int D = decltype(stages)::value;
      auto kernel = p->heads == 1 ? miles_rmsnorm::backward_atomic_kernel<XT, WT, VPT, D, false>
                                  : miles_rmsnorm::backward_atomic_kernel<XT, WT, VPT, D, true>;
      const cudaError_t attr = miles_rmsnorm::allow_dynamic_smem(kernel, smem);
      if (attr != cudaSuccess) return attr;
      kernel<<<grid, block, smem, stream>>>(*p);
      return cudaGetLastError();
    });
  }
};

}  // namespace

extern "C" cudaError_t miles_rmsnorm_backward_atomic_launch(const miles_rmsnorm::BackwardParams* p,
                                                            int x_dtype, int w_dtype, int vpt,
                                                            unsigned int grid_x,
                                                            unsigned int block,
                                                            cudaStream_t stream) {
  const AtomicLaunch launch{p, dim3(grid_x, 1, 1), dim3(block, 1, 1), stream};
  using miles_rmsnorm::BackwardVpts;
  return miles_rmsnorm::dispatch_types<BackwardVpts>(x_dtype, w_dtype, vpt, launch);
}
