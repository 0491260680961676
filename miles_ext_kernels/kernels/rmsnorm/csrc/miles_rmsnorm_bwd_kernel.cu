// miles-ext-kernels first-party RMSNorm deterministic backward program: device code and its
// host launcher — cooperative (the grid is at most what the device keeps co-resident, in balanced
// waves where there are more chunks: backward_wave_grid; the chunk partition, and so every bit
// of dw, does not depend on it), or one thread-block cluster that folds the chunks through
// distributed shared memory (launch_one_cluster).
#include <cuda_runtime.h>

#include <cstdlib>

#include "miles_rmsnorm/backward.cuh"
#include "miles_rmsnorm/backward_policy.h"
#include "miles_rmsnorm/dispatch.cuh"

namespace {

// Launches the grid as one thread-block cluster with the one-cluster fold (kClusterFold) where
// that applies: a kernel it is built into (cluster_fold_built: sm_90), one CTA a chunk, 2 to
// max_cluster_fold_ctas chunks (fewer than any device keeps co-resident), the fold's buffers fit
// in `limit` next to the ring's `smem`, the driver can place the cluster,
// MILES_EXT_KERNELS_CLUSTER_FOLD is not "0", and past 8 CTAs nonportable_clusters_allowed(). dw
// and dx have the grid barrier's bits either way; the fold skips the workspace, the grid barrier
// and the partials' trip through L2 (measured on the H200: docs/kernels.md, step 36). *done says
// whether it launched; if not, the caller takes the cooperative launch.
template <typename Kernel>
cudaError_t launch_one_cluster(Kernel kernel, const miles_rmsnorm::BackwardParams& p,
                               unsigned int grid, unsigned int block, size_t smem, size_t limit,
                               int device, cudaStream_t stream, bool* done) {
  *done = false;
  if (grid < 2 || static_cast<int64_t>(grid) != p.n_chunks ||
      grid > static_cast<unsigned int>(miles_rmsnorm::max_cluster_fold_ctas(p.hidden))) {
    return cudaSuccess;
  }
  if (const char* mode = std::getenv("MILES_EXT_KERNELS_CLUSTER_FOLD")) {
    if (mode[0] == '0') return cudaSuccess;
  }
  int major = 0;
  cudaError_t status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (status != cudaSuccess || major != 9) return status;
  const size_t bytes = smem + static_cast<size_t>(miles_rmsnorm::cluster_fold_bytes(
                                     p.hidden, static_cast<int>(grid)));
  if (bytes > limit) return cudaSuccess;
  // Past the portable cluster size only where allowed.
  if (grid > 8 && !miles_rmsnorm::nonportable_clusters_allowed()) return cudaSuccess;
  status = miles_rmsnorm::allow_dynamic_smem(kernel, bytes);
  if (status != cudaSuccess) return status;
  miles_rmsnorm::OneDimLaunch launch(grid, block, bytes, stream);
  launch.cluster(grid);
  bool placeable = false;
  status = miles_rmsnorm::cluster_placeable(kernel, launch, device, &placeable);
  if (status != cudaSuccess || !placeable) return status;
  miles_rmsnorm::BackwardParams q = p;
  q.flags |= miles_rmsnorm::kClusterFold;
  status = cudaLaunchKernelEx(&launch.config, kernel, q);
  *done = status == cudaSuccess;
  return status;
}

using DeterministicKernel = void (*)(miles_rmsnorm::BackwardParams);

// The paced instance (backward_pace) of one vector a thread for contiguous rows, `keep` (the
// evict_last copies) and `fixed` (the compile-time hidden size) as the unpaced one chose, or
// nullptr where none is built: with a ring of two stages, and of three only for the plain
// run-time hidden size (H 7944-8192 below kBackwardLargeRows rows, which keep rows only from
// 32,768); the others are not reachable (1024-thread CTAs at H 2048 and 4096 take two stages).
template <typename XT, typename WT, int D>
DeterministicKernel paced_instance(bool keep, bool fixed) {
  using miles_rmsnorm::backward_deterministic_kernel;
  constexpr int H = miles_rmsnorm::kBackwardFixedHidden;
  if constexpr (D == 2) {
    if (fixed) {
      return keep ? backward_deterministic_kernel<XT, WT, 1, D, false, true, H, true>
                  : backward_deterministic_kernel<XT, WT, 1, D, false, false, H, true>;
    }
    return keep ? backward_deterministic_kernel<XT, WT, 1, D, false, true, 0, true>
                : backward_deterministic_kernel<XT, WT, 1, D, false, false, 0, true>;
  } else if constexpr (D == 3) {
    if (!keep && !fixed) return backward_deterministic_kernel<XT, WT, 1, D, false, false, 0, true>;
  }
  return nullptr;
}

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
    // Large calls of contiguous rows copy them with an L2 evict_last policy (same bits).
    const bool residual = (p->flags & miles_rmsnorm::kResidual) != 0;
    const bool keep =
        p->heads == 1 && miles_rmsnorm::backward_keep_rows(p->rows, p->hidden, residual);
    const bool fixed = miles_rmsnorm::backward_fixed_hidden(p->hidden, p->tpr, p->heads);
    const int max_stages = miles_rmsnorm::backward_max_stages(static_cast<int>(block), p->rows);
    return miles_rmsnorm::launch_deepest_ring<VPT>(device, bytes, [&](auto stages, size_t smem,
                                                                      size_t limit) {
      constexpr int D = decltype(stages)::value;
      using miles_rmsnorm::backward_deterministic_kernel;
      auto kernel = p->heads == 1 ? backward_deterministic_kernel<XT, WT, VPT, D, false>
                                  : backward_deterministic_kernel<XT, WT, VPT, D, true>;
      if constexpr (VPT == 1) {
        if (keep) kernel = backward_deterministic_kernel<XT, WT, VPT, D, false, true>;
        // The compile-time hidden size's instance, with a ring of two or three stages (one stage
        // is the fallback of GPUs with little shared memory).
        if constexpr (D >= 2) {
          constexpr int H = miles_rmsnorm::kBackwardFixedHidden;
          if (fixed) {
            kernel = keep ? backward_deterministic_kernel<XT, WT, VPT, D, false, true, H>
                          : backward_deterministic_kernel<XT, WT, VPT, D, false, false, H>;
          }
        }
      }
      if constexpr (miles_rmsnorm::cluster_fold_built(VPT, D)) {
        // Tried first: the cooperative path's occupancy queries are not needed for it.
        bool done = false;
        const cudaError_t c =
            launch_one_cluster(kernel, *p, grid_x, block, smem, limit, device, stream, &done);
        if (c != cudaSuccess) return c;
        if (done) {
          if (launched) *launched = grid_x;
          return cudaSuccess;
        }
      }
      const cudaError_t attr = miles_rmsnorm::allow_dynamic_smem(kernel, smem);
      if (attr != cudaSuccess) return attr;
      int sms = 0;
      cudaError_t s = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      if (s != cudaSuccess) return s;
      int per_sm = 0;
      s = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem);
      if (s != cudaSuccess) return s;
      if (per_sm < 1) return cudaErrorInvalidConfiguration;
      const unsigned int grid = miles_rmsnorm::backward_wave_grid(
          grid_x, p->n_chunks, static_cast<unsigned int>(per_sm) * sms, per_sm);
      if constexpr (VPT == 1) {
        // The same launch paced (same resources and occupancy: the same launch bounds).
        if (miles_rmsnorm::backward_pace(VPT, static_cast<int>(block), p->tpr, p->heads, residual,
                                         p->n_chunks, grid, p->rows_per_chunk)) {
          if (const DeterministicKernel paced = paced_instance<XT, WT, D>(keep, fixed)) {
            kernel = paced;
            const cudaError_t a = miles_rmsnorm::allow_dynamic_smem(kernel, smem);
            if (a != cudaSuccess) return a;
          }
        }
      }
      if (launched) *launched = grid;
      miles_rmsnorm::OneDimLaunch launch(grid, block, smem, stream);
      launch.cooperative();
      return cudaLaunchKernelEx(&launch.config, kernel, *p);
    }, max_stages);
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
