// miles-ext-kernels first-party RMSNorm small-batch deterministic backward program (sm_90 and
// later): device code and its host launcher. Three kernels, the same dx and dw bits: one row in
// one CTA (backward_one_row.cuh), row and column CTAs (backward_row_column.cuh) where
// row_column_default takes them, else thread-block clusters (backward_small.cuh). The cluster
// shape is a function of the hidden size and the cluster count one of (rows, hidden)
// (small_backward_shape): up to 16 CTAs a cluster where the driver can place a cluster that
// large, else up to 8 with the same row partition.
#include <cuda_runtime.h>

#include <type_traits>

#include "miles_rmsnorm/backward_one_row.cuh"
#include "miles_rmsnorm/backward_row_column.cuh"
#include "miles_rmsnorm/backward_small.cuh"
#include "miles_rmsnorm/dispatch.cuh"

namespace {

// Calls fn(std::integral_constant<int, contract>{}) for the flags' kContractMask bits (cast
// before the weight multiply, zero-centred gamma): one kernel instance per contract.
template <typename Fn>
cudaError_t for_contract(int flags, Fn&& fn) {
  using miles_rmsnorm::kCastBeforeWeightMul;
  using miles_rmsnorm::kZeroCenteredGamma;
  switch (flags & miles_rmsnorm::kContractMask) {
    case 0: return fn(std::integral_constant<int, 0>{});
    case kCastBeforeWeightMul: return fn(std::integral_constant<int, kCastBeforeWeightMul>{});
    case kZeroCenteredGamma: return fn(std::integral_constant<int, kZeroCenteredGamma>{});
    default:  // both bits: the mask leaves no other value
      return fn(std::integral_constant<int, kCastBeforeWeightMul | kZeroCenteredGamma>{});
  }
}

struct SmallLaunch {
  const miles_rmsnorm::BackwardParams* p;
  miles_rmsnorm::SmallBackwardShape shape;
  cudaStream_t stream;

  template <typename XT, typename WT, int VPT>
  cudaError_t operator()() const {
    static_assert(VPT == 1, "the small-batch program runs one vector per thread");
    // One row up to the measured hidden size: one CTA holds it (backward_one_row_kernel, the
    // same bits), no cluster.
    if (p->rows == 1 && miles_rmsnorm::one_row_backward(p->hidden)) {
      return launch_one_row<XT, WT>();
    }
    // Batches of the rows a group has where it has one or two (no empty rows reduced and
    // exchanged: 1 x 4096 4.65 -> 3.22 us, H200), else of four.
    if (shape.rows_per_group == 1) return launch_batch<XT, WT, 1>();
    if (shape.rows_per_group == 2) return launch_batch<XT, WT, 2>();
    return launch_batch<XT, WT, miles_rmsnorm::kSmallBackwardBatch>();
  }

  // The kernel instance for the row's second-level butterfly width (1: a row of one whole warp,
  // 0: of less than one).
  template <typename XT, typename WT>
  cudaError_t launch_one_row() const {
    const int warps = shape.tpr / 32;
    switch (warps > 1 ? miles_rmsnorm::warp_partials_width(warps) : warps) {
      case 1: return launch_one_row_width<XT, WT, 1>();
      case 2: return launch_one_row_width<XT, WT, 2>();
      case 4: return launch_one_row_width<XT, WT, 4>();
      case 8: return launch_one_row_width<XT, WT, 8>();
      case 16: return launch_one_row_width<XT, WT, 16>();
      case 32: return launch_one_row_width<XT, WT, 32>();
      default: return launch_one_row_width<XT, WT, 0>();
    }
  }

  // The instance for the call's contract (cast before the weight multiply, zero-centred gamma).
  template <typename XT, typename WT, int WIDTH>
  cudaError_t launch_one_row_width() const {
    return for_contract(p->flags, [&](auto contract) {
      return launch_one_row_contract<XT, WT, WIDTH, decltype(contract)::value>();
    });
  }

  template <typename XT, typename WT, int WIDTH, int CONTRACT>
  cudaError_t launch_one_row_contract() const {
    const dim3 block(static_cast<unsigned int>(shape.tpr));
    if ((p->flags & miles_rmsnorm::kResidual) != 0) {
      miles_rmsnorm::backward_one_row_kernel<XT, WT, true, WIDTH, CONTRACT>
          <<<1, block, 0, stream>>>(*p);
    } else {
      miles_rmsnorm::backward_one_row_kernel<XT, WT, false, WIDTH, CONTRACT>
          <<<1, block, 0, stream>>>(*p);
    }
    return cudaGetLastError();
  }

  // Row and column CTAs where row_column_backward takes them and column_offsets_fit allows them
  // (B: the rows a column task loads at once), else the cluster kernel without the residual's g_h
  // staging where the call has none.
  template <typename XT, typename WT, int B>
  cudaError_t launch_batch() const {
    if (miles_rmsnorm::row_column_backward(p->rows) && miles_rmsnorm::column_offsets_fit(*p)) {
      if ((p->flags & miles_rmsnorm::kResidual) != 0) return launch_row_column<XT, WT, B, true>();
      return launch_row_column<XT, WT, B, false>();
    }
    if ((p->flags & miles_rmsnorm::kResidual) != 0) return launch_contract<XT, WT, B, true>();
    return launch_contract<XT, WT, B, false>();
  }

  template <typename XT, typename WT, int B, bool RESIDUAL>
  cudaError_t launch_row_column() const {
    const bool clustered = miles_rmsnorm::row_column_clusters(shape, p->rows, p->hidden);
    const miles_rmsnorm::RowColumnShape rc =
        miles_rmsnorm::row_column_shape(shape, p->rows, p->hidden, clustered);
    if (rc.cluster > 1) {
      // Column clusters of the smallest CTAs take a task's rows up to kRowColumnWideBatch at once
      // (the instance bounded at kRowColumnMinBlock threads, more registers a thread).
      // (The wide instance's tasks split its vectors where rc.split says: an instance each.)
      if (miles_rmsnorm::row_column_wide(shape, rc)) {
        constexpr int kWide = miles_rmsnorm::kRowColumnWideBatch;
        if (rc.split == miles_rmsnorm::kRowColumnWideSplit) {
          return launch_column_clusters<XT, WT, kWide, RESIDUAL,
                                        miles_rmsnorm::kRowColumnWideSplit>(rc);
        }
        return launch_column_clusters<XT, WT, kWide, RESIDUAL, 1>(rc);
      }
      return launch_column_clusters<XT, WT, B, RESIDUAL, 1>(rc);
    }
    const unsigned int grid = static_cast<unsigned int>(rc.row_ctas + rc.column_ctas);
    miles_rmsnorm::backward_row_column_kernel<XT, WT, B, RESIDUAL, false>
        <<<grid, static_cast<unsigned int>(rc.block), 0, stream>>>(*p, shape, rc);
    return cudaGetLastError();
  }

  template <typename XT, typename WT, int B, bool RESIDUAL, int SPLIT>
  cudaError_t launch_column_clusters(const miles_rmsnorm::RowColumnShape& rc) const {
    auto kernel = miles_rmsnorm::backward_row_column_kernel<XT, WT, B, RESIDUAL, true, SPLIT>;
    const unsigned int grid = static_cast<unsigned int>(rc.row_ctas + rc.column_ctas);
    miles_rmsnorm::OneDimLaunch launch(grid, static_cast<unsigned int>(rc.block), 0, stream);
    launch.cluster(static_cast<unsigned int>(rc.cluster));
    return cudaLaunchKernelEx(&launch.config, kernel, *p, shape, rc);
  }

  // Full batches take the kernel built for the call's contract; one- and two-row batches the
  // kernel that reads it from the flags.
  template <typename XT, typename WT, int B, bool RESIDUAL>
  cudaError_t launch_contract() const {
    if constexpr (B == miles_rmsnorm::kSmallBackwardBatch) {
      return for_contract(p->flags, [&](auto contract) {
        return launch_clusters<XT, WT, B, RESIDUAL, decltype(contract)::value>();
      });
    } else {
      return launch_clusters<XT, WT, B, RESIDUAL, miles_rmsnorm::kRuntimeContract>();
    }
  }

  // The kernel without the row blocks and the fold where the call runs one cluster.
  template <typename XT, typename WT, int B, bool RESIDUAL, int CONTRACT>
  cudaError_t launch_clusters() const {
    if (shape.clusters > 1) return launch<XT, WT, B, RESIDUAL, true, CONTRACT>();
    return launch<XT, WT, B, RESIDUAL, false, CONTRACT>();
  }

  template <typename XT, typename WT, int B, bool RESIDUAL, bool MULTI, int CONTRACT>
  cudaError_t launch() const {
    auto kernel = miles_rmsnorm::backward_small_kernel<XT, WT, B, RESIDUAL, MULTI, CONTRACT>;
    miles_rmsnorm::SmallBackwardShape s = shape;
    if (s.ctas > miles_rmsnorm::kSmallBackwardPortableCtas) {
      // Asked at the largest block (kSmallBackwardMaxBlock threads), once per device and kernel.
      bool placeable = false;
      if (miles_rmsnorm::nonportable_clusters_allowed()) {
        int device = 0;
        cudaError_t status = cudaGetDevice(&device);
        if (status != cudaSuccess) return status;
        constexpr auto kCtas = static_cast<unsigned int>(miles_rmsnorm::kSmallBackwardMaxCtas);
        miles_rmsnorm::OneDimLaunch probe(kCtas, miles_rmsnorm::kSmallBackwardMaxBlock, 0,
                                          stream);
        probe.cluster(kCtas);
        status = miles_rmsnorm::cluster_placeable(kernel, probe, device, &placeable);
        if (status != cudaSuccess) return status;
      }
      if (!placeable) {
        s = miles_rmsnorm::small_backward_shape(p->rows, p->hidden,
                                                miles_rmsnorm::kSmallBackwardPortableCtas);
      }
    }
    miles_rmsnorm::OneDimLaunch launch(static_cast<unsigned int>(s.ctas * s.clusters),
                                       static_cast<unsigned int>(s.block), 0, stream);
    // A row within one warp needs no exchange and no cluster: launched without the attribute,
    // which measured 0.3 us faster at 1 x 256 (3.33 -> 3.05 us, H200, cold L2).
    if (s.ctas > 1) launch.cluster(static_cast<unsigned int>(s.ctas));
    return cudaLaunchKernelEx(&launch.config, kernel, *p, s);
  }
};

}  // namespace

// `shape`: small_backward_shape(p->rows, p->hidden), as the binding computed it for its checks.
extern "C" cudaError_t miles_rmsnorm_backward_small_launch(
    const miles_rmsnorm::BackwardParams* p, const miles_rmsnorm::SmallBackwardShape* shape,
    int x_dtype, int w_dtype, cudaStream_t stream) {
  const SmallLaunch launch{p, *shape, stream};
  using SmallVpts = miles_rmsnorm::VptList<1>;
  return miles_rmsnorm::dispatch_types<SmallVpts>(x_dtype, w_dtype, 1, launch);
}
