// miles-ext-kernels first-party RMSNorm forward program: device code and its host launcher.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/dispatch.cuh"
#include "miles_rmsnorm/forward.cuh"

namespace {

// Whether the ring forward of <XT, WT, VPT> may take `bytes` of dynamic shared memory on the
// current device. The first call for a device raises that kernel's limit to all the device
// allows (a function attribute, legal during stream capture); later calls read a bit mask. Each
// instantiation keeps its own state (the attribute belongs to one kernel). Devices past the
// 64th, or a failed query, take the plain forward.
template <typename XT, typename WT, int VPT>
bool ring_fits(int64_t bytes) {
  const auto kernel = miles_rmsnorm::forward_ring_kernel<XT, WT, VPT>;
  static std::atomic<uint64_t> raised{0};
  static std::atomic<int64_t> limit[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
  const uint64_t bit = UINT64_C(1) << device;
  if ((raised.load(std::memory_order_acquire) & bit) == 0) {
    int optin = 0;
    cudaFuncAttributes attr{};
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess ||
        cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    const int64_t room = static_cast<int64_t>(optin) - static_cast<int64_t>(attr.sharedSizeBytes);
    if (room > 0 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(room)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    limit[device].store(room > 0 ? room : 0, std::memory_order_relaxed);
    raised.fetch_or(bit, std::memory_order_release);
  }
  return bytes <= limit[device].load(std::memory_order_relaxed);
}

// Calls fn(std::integral_constant<int, form>{}) for a form of the loop-free forward (the flags'
// kForwardFormMask bits): one kernel instance per form.
template <typename Fn>
cudaError_t for_form(int form, Fn&& fn) {
  switch (form) {
    case 0: return fn(std::integral_constant<int, 0>{});
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 6: return fn(std::integral_constant<int, 6>{});
    case 7: return fn(std::integral_constant<int, 7>{});
    default: return cudaErrorInvalidValue;
  }
}

struct ForwardLaunch {
  const miles_rmsnorm::ForwardParams* p;
  dim3 grid;
  dim3 block;
  cudaStream_t stream;

  template <typename XT, typename WT, int VPT>
  cudaError_t operator()() const {
    const miles_rmsnorm::RowConfig c = miles_rmsnorm::forward_config(p->hidden);
    // A grid with a row group for every row (the spread window, and every batch on the records
    // of spec.FORWARD_ROWS_HIDDEN) takes the loop-free kernel, while its row slots fit 32-bit
    // indices. Its CTAs hold one warp's worth of row groups (one group when a row takes a warp or
    // more), so no idle group of a CTA competes with the working ones for issue slots; which CTA
    // computes a row changes no bit. The spread window takes the small-batch instance (64
    // registers); past it, FP32 weights load them after the row reduction (forward_rows_kernel's
    // SMALL_BATCH and LATE_WEIGHTS). Each instance is built for one form of the call (for_form).
    const int64_t slots = static_cast<int64_t>(grid.x) * p->groups;
    if (slots >= p->rows && slots <= INT32_MAX) {
      miles_rmsnorm::ForwardParams q = *p;
      q.groups = p->tpr >= 32 ? 1 : 32 / p->tpr;
      const dim3 rows_grid(static_cast<unsigned int>((p->rows + q.groups - 1) / q.groups));
      const dim3 rows_block(static_cast<unsigned int>(q.groups * p->tpr));
      const bool small_batch = p->rows <= miles_rmsnorm::forward_spread_rows(c);
      return for_form(p->flags & miles_rmsnorm::kForwardFormMask, [&](auto form) {
        constexpr int kForm = decltype(form)::value;
        if (small_batch) {
          miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, true, kForm>
              <<<rows_grid, rows_block, 0, stream>>>(q);
        } else {
          miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, false, kForm>
              <<<rows_grid, rows_block, 0, stream>>>(q);
        }
        return cudaGetLastError();
      });
    }
    // One vector per thread means CTAs of 256 threads, which never take the ring.
    if constexpr (VPT > 1) {
      const bool residual = (p->flags & miles_rmsnorm::kResidual) != 0;
      if (miles_rmsnorm::forward_ring_stages(c, residual) > 0) {
        const int64_t bytes = miles_rmsnorm::forward_ring_bytes(c);
        if (ring_fits<XT, WT, VPT>(bytes)) {
          miles_rmsnorm::forward_ring_kernel<XT, WT, VPT>
              <<<grid, block, static_cast<size_t>(bytes), stream>>>(*p);
          return cudaGetLastError();
        }
      }
    }
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
