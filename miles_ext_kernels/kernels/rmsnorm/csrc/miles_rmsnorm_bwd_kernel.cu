// miles-ext-kernels first-party RMSNorm deterministic backward program: device code and its
// cooperative host launcher (the grid is clamped to what the device keeps co-resident; the
// chunk partition, and so every bit of dw, does not depend on it).
#include <cuda_runtime.h>

#include "miles_rmsnorm/backward.cuh"
#include "miles_rmsnorm/dispatch.cuh"

namespace {

struct DeterministicLaunch {
  const miles_rmsnorm::BackwardParams* p;
  unsigned int grid_x;
  unsigned int block;
  cudaStream_t stream;
  unsigned int* launched;

  template <typename XT, typename WT, int VPT>
  cudaError_t operator()() const {
    int device = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status != cudaSuccess) return status;
    auto bytes = [&](int stages) {
      return miles_rmsnorm::deterministic_smem_bytes(
          p->hidden, static_cast<int>(block) / p->tpr, static_cast<int>(block), VPT,
          miles_rmsnorm::backward_rows_per_group(VPT), stages);
    };
    return miles_rmsnorm::launch_deepest_ring<VPT>(device, bytes, [&](auto stages, size_t smem) {
      constexpr int D = decltype(stages)::value;
      using miles_rmsnorm::backward_deterministic_kernel;
      auto kernel = p->heads == 1 ? backward_deterministic_kernel<XT, WT, VPT, D, false>
                                  : backward_deterministic_kernel<XT, WT, VPT, D, true>;
      const cudaError_t attr = miles_rmsnorm::allow_dynamic_smem(kernel, smem);
      if (attr != cudaSuccess) return attr;
      int sms = 0;
      cudaError_t s = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      if (s != cudaSuccess) return s;
      int per_sm = 0;
      s = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem);
      if (s != cudaSuccess) return s;
      if (per_sm < 1) return cudaErrorInvalidConfiguration;
      unsigned int grid = grid_x;
      const unsigned int resident = static_cast<unsigned int>(per_sm) * sms;
      if (grid > resident) grid = resident;
      if (grid < 1) grid = 1;
      if (launched) *launched = grid;
      cudaLaunchAttribute attrs[1] = {};
      attrs[0].id = cudaLaunchAttributeCooperative;
      attrs[0].val.cooperative = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(grid, 1, 1);
      config.blockDim = dim3(block, 1, 1);
      config.dynamicSmemBytes = smem;
      config.stream = stream;
      config.attrs = attrs;
      config.numAttrs = 1;
      return cudaLaunchKernelEx(&config, kernel, *p);
    });
  }
};

}  // namespace

extern "C" cudaError_t miles_rmsnorm_backward_launch(const miles_rmsnorm::BackwardParams* p,
                                                     int x_dtype, int w_dtype, int vpt,
                                                     unsigned int grid_x, unsigned int block,
                                                     cudaStream_t stream,
                                                     unsigned int* launched_grid) {
  const DeterministicLaunch launch{p, grid_x, block, stream, launched_grid};
  using miles_rmsnorm::BackwardVpts;
  return miles_rmsnorm::dispatch_types<BackwardVpts>(x_dtype, w_dtype, vpt, launch);
}
