// miles-ext-kernels first-party RMSNorm: the launch configuration of a one-dimensional grid, for
// the launchers that need an attribute (a cooperative launch or a thread-block cluster).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace miles_rmsnorm {

// The launch configuration of a one-dimensional grid with at most one attribute: the cooperative
// flag or a one-dimensional cluster. Not copyable: `config.attrs` points into the object.
struct OneDimLaunch {
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t config{};
  OneDimLaunch(unsigned int grid, unsigned int block, size_t smem, cudaStream_t stream) {
    config.gridDim = dim3(grid, 1, 1);
    config.blockDim = dim3(block, 1, 1);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &attr;
    config.numAttrs = 0;
  }
  OneDimLaunch(const OneDimLaunch&) = delete;
  OneDimLaunch& operator=(const OneDimLaunch&) = delete;
  void cooperative() {
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    config.numAttrs = 1;
  }
  void cluster(unsigned int ctas) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = ctas;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.numAttrs = 1;
  }
};

}  // namespace miles_rmsnorm
