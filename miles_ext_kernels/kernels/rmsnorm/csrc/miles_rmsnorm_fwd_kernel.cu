// miles-ext-kernels first-party RMSNorm forward program: device code and its host launcher.
#include <cuda_runtime.h>

#include "miles_rmsnorm/dispatch.cuh"
#include "miles_rmsnorm/forward.cuh"

namespace {

struct ForwardLaunch {
  const miles_rmsnorm::ForwardParams* p;
  dim3 grid;
  dim3 block;
  cudaStream_t stream;

  template <typename XT, typename WT, int VPT>
  cudaError_t operator()() const {
    miles_rmsnorm::forward_kernel<XT, WT, VPT><<<grid, block, 0, stream>>>(*p);
    return cudaGetLastError();
  }
};

}  // namespace

extern "C" cudaError_t miles_rmsnorm_forward_launch(const miles_rmsnorm::ForwardParams* p,
                                                    int x_dtype, int w_dtype, int vpt,
                                                    unsigned int grid_x, unsigned int block,
                                                    cudaStream_t stream) {
  const ForwardLaunch launch{p, dim3(grid_x, 1, 1), dim3(block, 1, 1), stream};
  using miles_rmsnorm::ForwardVpts;
  return miles_rmsnorm::dispatch_types<ForwardVpts>(x_dtype, w_dtype, vpt, launch);
}
