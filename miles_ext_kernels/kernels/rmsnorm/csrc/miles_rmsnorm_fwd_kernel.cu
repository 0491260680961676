// miles-ext-kernels first-party RMSNorm forward program: device code and its host launcher.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/dispatch.cuh"
#include "miles_rmsnorm/forward.cuh"
#include "miles_rmsnorm/forward_fixed.cuh"
#include "miles_rmsnorm/forward_policy.h"
#include "miles_rmsnorm/forward_split.cuh"
#include "miles_rmsnorm/launch.h"

namespace {

// Whether the ring forward of <XT, WT, VPT> may take `bytes` of dynamic shared memory on the
// current device. The first call for a device raises that kernel's limit to all the device
// allows (a function attribute, legal during stream capture); later calls read a bit mask. Each
// instantiation keeps its own state (the attribute belongs to one kernel). Devices past the
// 64th, or a failed query, take the plain forward.
template <typename XT, typename WT, int VPT, bool KEEP>
bool ring_fits(int64_t bytes) {
  const auto kernel = miles_rmsnorm::forward_ring_kernel<XT, WT, VPT, KEEP>;
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

// The compute capability's major number and the SM count of `device`, asked once per device (the
// first 64; later ones, or a failed query, report 0 and 0).
struct DeviceFacts {
  int major;
  int sms;
};

DeviceFacts device_facts(int device) {
  static std::atomic<int> major[64];
  static std::atomic<int> sms[64];
  if (device < 0 || device >= 64) return {0, 0};
  int m = major[device].load(std::memory_order_acquire);
  if (m == 0) {
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      return {0, 0};
    }
    sms[device].store(count, std::memory_order_relaxed);
    major[device].store(m, std::memory_order_release);
  }
  return {m, sms[device].load(std::memory_order_relaxed)};
}

// How a small batch's rows are split (forward_split_kernel): `ctas` CTAs a row, 0 for one CTA a
// row; `forced` when MILES_EXT_KERNELS_SPLIT_ROWS named the count.
struct RowSplit {
  int ctas;
  bool forced;
};

// MILES_EXT_KERNELS_SPLIT_ROWS (2 .. 8: that many CTAs a row, at most one a warp of the row; any
// other value, "0" say: one CTA a row), else the measured choice (split_row_default; fixed_kernel:
// one CTA a row would run forward_fixed_kernel). Only on GPUs with thread-block clusters (sm_90 and
// later) and rows of at least two warps; the choice changes no bit.
RowSplit split_row_ctas(const miles_rmsnorm::ForwardParams& p, int weight_bytes, bool fixed_kernel,
                        int device) {
  const int warps = p.tpr / 32;
  if (warps < 2) return {0, false};
  const DeviceFacts facts = device_facts(device);
  if (facts.major < 9) return {0, false};
  int ctas = miles_rmsnorm::split_row_default(p.rows, p.hidden,
                                              (p.flags & miles_rmsnorm::kResidual) != 0,
                                              weight_bytes, facts.sms, fixed_kernel);
  bool forced = false;
  if (const char* mode = std::getenv("MILES_EXT_KERNELS_SPLIT_ROWS")) {
    const int count = std::atoi(mode);
    forced = count >= 2 && count <= miles_rmsnorm::kMaxSplitCtas;
    ctas = forced ? count : 0;
  }
  if (ctas > warps) ctas = warps;
  return {ctas >= 2 ? ctas : 0, forced};
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

// Launches forward_fixed_kernel for q.hidden if it is kFixedForwardHidden[I] or a later entry
// whose shape has VPT vectors a thread; `launched` says whether one ran. BF16 activations only
// (every form, the residual one included), contiguous or row-strided rows (q.heads == 1), and
// per-head views where a row takes one warp (fixed_forward_per_head: the PER_HEAD instances; at
// other sizes per-head views take forward_rows_kernel, same bits); the order of its loads is
// fixed_forward_weights_first's.
// `halves` (fixed_forward_halves): the plain form at kFixedHalvesHidden as two CTAs a row
// (forward_fixed_halves_kernel, twice the grid; same bits). q.groups > 1 (forward_fixed_rows, rows
// of one warp only): forward_config's groups rows a CTA (the kernel's ROWS).
template <typename XT, typename WT, int VPT, int FORM, int I = 0>
cudaError_t launch_fixed_forward(const miles_rmsnorm::ForwardParams& q, dim3 grid, dim3 block,
                                 bool halves, cudaStream_t stream, bool& launched) {
  if constexpr (I < miles_rmsnorm::kFixedForwardCount && std::is_same_v<XT, __nv_bfloat16>) {
    constexpr int kHidden = miles_rmsnorm::kFixedForwardHidden[I];
    constexpr miles_rmsnorm::RowConfig kShape = miles_rmsnorm::forward_config(kHidden);
    static_assert(8 * kShape.vpt * kShape.tpr == kHidden, "a whole number of vectors a thread");
    if constexpr (kShape.vpt == VPT) {
      constexpr bool kPerHead = miles_rmsnorm::fixed_forward_per_head(kHidden);
      if (q.hidden == kHidden && q.tpr == kShape.tpr &&
          miles_rmsnorm::fixed_forward_rows_of(kHidden, q.heads)) {
        launched = true;
        constexpr bool kRes = (FORM & miles_rmsnorm::kResidual) != 0;
        if constexpr (!kRes && VPT == 2 && kHidden == miles_rmsnorm::kFixedHalvesHidden) {
          if (halves) {
            miles_rmsnorm::forward_fixed_halves_kernel<XT, WT, kShape.tpr, FORM>
                <<<dim3(grid.x * 2), block, 0, stream>>>(q);
            return cudaGetLastError();
          }
        }
        // One instance for each load order (fixed_forward_weights_first; the residual form has
        // only the weights-first one), each count of rows a CTA and, where kPerHead, each kind of
        // row addressing.
        const auto launch_instance = [&](auto rows_a_cta, auto per_head) {
          constexpr int kRows = decltype(rows_a_cta)::value;
          constexpr bool kHeads = decltype(per_head)::value;
          // With one row a CTA the kernel reads no row count: its grid must be the rows.
          if (kRows == 1 && static_cast<int64_t>(grid.x) != q.rows) {
            return cudaErrorInvalidConfiguration;
          }
          if (miles_rmsnorm::fixed_forward_weights_first(q.rows, kHidden, kRes)) {
            miles_rmsnorm::forward_fixed_kernel<XT, WT, VPT, kShape.tpr, FORM, true, kRows, kHeads>
                <<<grid, block, 0, stream>>>(q);
          } else if constexpr (!kRes) {
            miles_rmsnorm::forward_fixed_kernel<XT, WT, VPT, kShape.tpr, FORM, false, kRows,
                                                kHeads><<<grid, block, 0, stream>>>(q);
          }
          return cudaGetLastError();
        };
        const auto launch_rows = [&](auto rows_a_cta) {
          if constexpr (kPerHead) {
            if (q.heads != 1) return launch_instance(rows_a_cta, std::true_type{});
          }
          return launch_instance(rows_a_cta, std::false_type{});
        };
        if constexpr (kShape.tpr == 32) {
          if (q.groups > 1) {
            if (q.groups != kShape.groups) return cudaErrorInvalidConfiguration;
            return launch_rows(std::integral_constant<int, kShape.groups>{});
          }
        }
        return launch_rows(std::integral_constant<int, 1>{});
      }
    }
    return launch_fixed_forward<XT, WT, VPT, FORM, I + 1>(q, grid, block, halves, stream,
                                                          launched);
  }
  return cudaSuccess;
}

// Whether fixed_forward_half_warp's calls may take the fixed kernel: unless
// MILES_EXT_KERNELS_FIXED_HALF_WARP is "0" (a test hook; the same bits either way).
bool fixed_half_warp_allowed() {
  const char* mode = std::getenv("MILES_EXT_KERNELS_FIXED_HALF_WARP");
  return mode == nullptr || mode[0] != '0';
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
    // computes a row changes no bit. Small batches (forward_small_batch_rows: the first 128 CTAs'
    // worth of the spread window) take the small-batch instance (64 registers), and so do the
    // calls of forward_latency_window whatever their grid; past them, FP32 weights of two
    // vectors a thread load after the row reduction (forward_rows_kernel's SMALL_BATCH and
    // LATE_WEIGHTS). Each instance is built for one form of the call (for_form). On GPUs with
    // thread-block clusters a small batch's rows may instead be split over several CTAs each
    // (forward_split_kernel, split_row_ctas), and the fixed kernel's plain form may run as two
    // CTAs a row (fixed_forward_halves). Past the spread window, rows of at most one warp
    // fill CTAs of forward_config's groups instead, two rows a group at H <= 256 from 16384 rows
    // (config.h: forward_spread_rows, kForwardWideRows, kForwardWideRowsMinRows); rows of one
    // warp may take a half-warp a row (forward_half_warp), as many rows a CTA. BF16 rows of one
    // warp at the fixed kernel's sizes take it from 65 rows with forward_config's groups of rows
    // a CTA (forward_fixed_rows: the plain form up to the spread window, the residual form at
    // every row count), on a grid of their own.
    const int64_t slots = static_cast<int64_t>(grid.x) * p->groups;
    const bool residual = (p->flags & miles_rmsnorm::kResidual) != 0;
    // BF16 rows of one warp at H 256 and 512 past the spread window: 4 / VPT rows a warp
    // (forward_warp_rows), on a grid of their own; per-head views through the PER_HEAD instance.
    if constexpr (std::is_same_v<XT, __nv_bfloat16> && VPT <= 2) {
      if (p->hidden == 256 * VPT &&
          miles_rmsnorm::forward_warp_rows(p->rows, p->hidden, residual)) {
        constexpr int64_t kRowsACta =
            int64_t{miles_rmsnorm::kWarpRowsWarps} * miles_rmsnorm::kWarpRowsPerWarp<VPT>;
        const dim3 warp_rows_grid(static_cast<unsigned int>((p->rows + kRowsACta - 1) / kRowsACta));
        const dim3 warp_rows_block(32 * miles_rmsnorm::kWarpRowsWarps);
        return for_form(p->flags & miles_rmsnorm::kForwardFormMask, [&](auto form) {
          constexpr int kForm = decltype(form)::value;
          if constexpr ((kForm & miles_rmsnorm::kResidual) == 0) {
            if (p->heads != 1) {
              miles_rmsnorm::forward_fixed_warp_rows_kernel<XT, WT, VPT, kForm, true>
                  <<<warp_rows_grid, warp_rows_block, 0, stream>>>(*p);
            } else {
              miles_rmsnorm::forward_fixed_warp_rows_kernel<XT, WT, VPT, kForm>
                  <<<warp_rows_grid, warp_rows_block, 0, stream>>>(*p);
            }
            return cudaGetLastError();
          } else {
            return cudaErrorInvalidConfiguration;
          }
        });
      }
    }
    // Streaming calls of the kKeepRows kernels: their evict_last instance or not (same bits).
    const bool keep = miles_rmsnorm::forward_keep_rows(p->rows, p->hidden, residual);
    const bool latency_window = miles_rmsnorm::forward_latency_window(
        p->rows, p->hidden, residual, static_cast<int>(sizeof(WT)),
        std::is_same_v<XT, __nv_bfloat16>);
    // BF16 rows of one warp at the fixed kernel's sizes: forward_config's CTA of them.
    const bool fixed_rows = std::is_same_v<XT, __nv_bfloat16> &&
                            miles_rmsnorm::forward_fixed_rows(p->rows, p->hidden, residual);
    if ((slots >= p->rows && slots <= INT32_MAX) || latency_window || fixed_rows) {
      miles_rmsnorm::ForwardParams q = *p;
      q.groups = fixed_rows ? c.groups : p->tpr >= 32 ? 1 : 32 / p->tpr;
      // The small-batch path's kernels compute a row a CTA (or a cluster), or fixed_rows' CTA
      // of rows: never wide groups.
      const bool wide = !latency_window && !fixed_rows && p->tpr <= 32 &&
                        p->rows > miles_rmsnorm::forward_spread_rows(c, p->hidden);
      if (wide) q.groups = c.groups;
      const int rows_per_group =
          wide && !residual && p->rows >= miles_rmsnorm::kForwardWideRowsMinRows
              ? miles_rmsnorm::kForwardWideRows<VPT>
              : 1;
      const int64_t rows_per_cta = static_cast<int64_t>(q.groups) * rows_per_group;
      const dim3 rows_grid(static_cast<unsigned int>((p->rows + rows_per_cta - 1) / rows_per_cta));
      const dim3 rows_block(static_cast<unsigned int>(q.groups * p->tpr));
      const bool small_batch =
          p->rows <= miles_rmsnorm::forward_small_batch_rows(c) || latency_window || fixed_rows;
      const bool half_warp = !small_batch && miles_rmsnorm::forward_half_warp(
                                                 p->rows, p->hidden, residual,
                                                 static_cast<int>(sizeof(WT)));
      int device = 0;
      const bool known_device = small_batch && cudaGetDevice(&device) == cudaSuccess;
      // Rows that one CTA would compute with forward_fixed_kernel (launch_fixed_forward's test).
      const bool fixed_kernel = std::is_same_v<XT, __nv_bfloat16> &&
                                miles_rmsnorm::fixed_forward_rows_of(p->hidden, p->heads);
      const RowSplit split =
          known_device ? split_row_ctas(*p, static_cast<int>(sizeof(WT)), fixed_kernel, device)
                       : RowSplit{0, false};
      // BF16 rows of half a warp on the grid of two rows a CTA: the fixed kernel at TPR 16.
      const bool half_warp_fixed =
          std::is_same_v<XT, __nv_bfloat16> &&
          miles_rmsnorm::fixed_forward_half_warp(p->hidden, residual) && q.groups == 2 &&
          rows_block.x == 32 && fixed_half_warp_allowed();
      const bool halves = known_device && miles_rmsnorm::fixed_forward_halves(
                                              p->rows, p->hidden, residual,
                                              device_facts(device).sms);
      return for_form(p->flags & miles_rmsnorm::kForwardFormMask, [&](auto form) {
        constexpr int kForm = decltype(form)::value;
        if constexpr (VPT == 2) {
          if (split.ctas > 0) {
            // A row over a cluster of `split.ctas` CTAs (forward_split_kernel): same bits.
            const miles_rmsnorm::SplitRowShape s =
                miles_rmsnorm::split_row_shape(p->tpr, split.ctas);
            miles_rmsnorm::OneDimLaunch launch(
                static_cast<unsigned int>(p->rows * s.ctas), static_cast<unsigned int>(s.block),
                0, stream);
            launch.cluster(static_cast<unsigned int>(s.ctas));
            const cudaError_t status = cudaLaunchKernelEx(
                &launch.config, miles_rmsnorm::forward_split_kernel<XT, WT, VPT, kForm>, *p);
            if (status == cudaSuccess) return status;
            cudaGetLastError();
            // A count forced by MILES_EXT_KERNELS_SPLIT_ROWS reports the failure, so that a test
            // of the split never passes on one CTA a row. The measured choice falls back on a
            // cluster the device cannot place (an SM partition, say): one CTA a row below gives
            // the same bits.
            if (split.forced) return status;
          }
        }
        if constexpr (VPT == 1 && std::is_same_v<XT, __nv_bfloat16> &&
                      (kForm & miles_rmsnorm::kResidual) == 0) {
          if (half_warp_fixed) {
            constexpr int kTpr =
                miles_rmsnorm::forward_config(miles_rmsnorm::kFixedHalfWarpHidden).tpr;
            static_assert(kTpr == 16, "rows of half a warp");
            if (p->heads != 1) {
              miles_rmsnorm::forward_fixed_kernel<XT, WT, 1, kTpr, kForm, true, 2, true>
                  <<<rows_grid, rows_block, 0, stream>>>(q);
            } else {
              miles_rmsnorm::forward_fixed_kernel<XT, WT, 1, kTpr, kForm, true, 2>
                  <<<rows_grid, rows_block, 0, stream>>>(q);
            }
            return cudaGetLastError();
          }
        }
        if (small_batch) {
          // The common hidden sizes have an instance of their own for BF16 rows
          // (forward_fixed_kernel, same bits); every other call takes the run-time row width.
          bool launched = false;
          const cudaError_t status = launch_fixed_forward<XT, WT, VPT, kForm>(
              q, rows_grid, rows_block, halves, stream, launched);
          if (launched) return status;
          miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, true, kForm>
              <<<rows_grid, rows_block, 0, stream>>>(q);
        } else if (half_warp) {
          // A half-warp a row (forward_half_warp_kernel, same bits), the grid's rows_per_cta rows
          // a CTA: 16 from kForwardWideRowsMinRows rows, else 8.
          if constexpr (VPT == 1 && (kForm & miles_rmsnorm::kResidual) == 0) {
            miles_rmsnorm::forward_half_warp_kernel<XT, WT, kForm>
                <<<rows_grid,
                   dim3(static_cast<unsigned int>(rows_per_cta * miles_rmsnorm::kHalfWarp)), 0,
                   stream>>>(q);
          } else {
            return cudaErrorInvalidConfiguration;
          }
        } else if (rows_per_group > 1) {
          // rows_per_group > 1 only where kForwardWideRows<VPT> > 1 and the form has no residual;
          // the grid counts rows_per_group rows a group, so no other kernel may take it.
          if constexpr (miles_rmsnorm::kForwardWideRows<VPT> > 1 &&
                        (kForm & miles_rmsnorm::kResidual) == 0) {
            miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, false, kForm,
                                               miles_rmsnorm::kForwardWideRows<VPT>>
                <<<rows_grid, rows_block, 0, stream>>>(q);
          } else {
            return cudaErrorInvalidConfiguration;
          }
        } else {
          if constexpr (miles_rmsnorm::kKeepRows<WT, VPT> &&
                        (kForm & miles_rmsnorm::kResidual) == 0) {
            if (keep) {
              miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, false, kForm, 1, true>
                  <<<rows_grid, rows_block, 0, stream>>>(q);
              return cudaGetLastError();
            }
          }
          miles_rmsnorm::forward_rows_kernel<XT, WT, VPT, false, kForm>
              <<<rows_grid, rows_block, 0, stream>>>(q);
        }
        return cudaGetLastError();
      });
    }
    // One vector per thread means CTAs of 256 threads, which never take the ring.
    if constexpr (VPT > 1) {
      if (miles_rmsnorm::forward_ring_stages(c, residual) > 0) {
        const int64_t bytes = miles_rmsnorm::forward_ring_bytes(c);
        // Large calls copy x with an L2 evict_last policy (same bits).
        if (miles_rmsnorm::forward_keep_ring(p->rows, p->hidden)) {
          if (ring_fits<XT, WT, VPT, true>(bytes)) {
            miles_rmsnorm::forward_ring_kernel<XT, WT, VPT, true>
                <<<grid, block, static_cast<size_t>(bytes), stream>>>(*p);
            return cudaGetLastError();
          }
        } else if (ring_fits<XT, WT, VPT, false>(bytes)) {
          miles_rmsnorm::forward_ring_kernel<XT, WT, VPT>
              <<<grid, block, static_cast<size_t>(bytes), stream>>>(*p);
          return cudaGetLastError();
        }
      }
    }
    if constexpr (miles_rmsnorm::kKeepRows<WT, VPT>) {
      if (keep) {
        miles_rmsnorm::forward_kernel<XT, WT, VPT, true><<<grid, block, 0, stream>>>(*p);
        return cudaGetLastError();
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
