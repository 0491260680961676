// Session 22 probe: the package's backward_small_kernel with globaltimer stamps held in
// registers and stored by thread 0 of each CTA at the end: 0 entry, 1 first batch's loads issued,
// 2 barriers set up, 3 first batch's dot reduced in the warp (its loads landed), 4 its exchange
// done, 5 its first row's dx, 6 every batch's dx, 7 dw done.
#pragma once
#include "miles_rmsnorm/backward_small.cuh"
__device__ unsigned long long* g_stamps;
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after(float v) {
  unsigned long long t;
  asm volatile("{.reg .f32 q; mov.f32 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "f"(v) : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after_d(double v) {
  unsigned long long t;
  asm volatile("{.reg .f64 q; mov.f64 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "d"(v) : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after_i(int v) {
  unsigned long long t;
  asm volatile("{.reg .s32 q; mov.s32 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "r"(v) : "memory");
  return t;
}
namespace miles_rmsnorm {
template <typename XT, typename WT, int B, bool RESIDUAL, bool MULTI, int CONTRACT, bool PREFETCH = false>
__global__ void __launch_bounds__(kSmallBackwardMaxBlock, 1)
    stamped_kernel(const BackwardParams p, const SmallBackwardShape s) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // clusters need sm_90; the package builds this program for sm_90 and later only
#else
  namespace cg = cooperative_groups;
  unsigned long long st[12];
  st[0] = gtime();
  st[8] = clock64();
  static_assert(B == 1 || B == 2 || B == kSmallBackwardBatch,
                "a batch's warp partials travel as one store");
  constexpr int kWarps = kSmallBackwardMaxBlock / 32;
  // Row groups x warps of a row: at most 128, the row partition being the portable shape's (its
  // row groups times its CTAs' warps of a row fit 16 warps a CTA times 8 CTAs).
  constexpr int kRowWarps = kSmallBackwardPortableCtas * kWarps;
  // [row group][slice column] FP64 sums (the fold), and the warp partials of the rows of a batch
  // received from the cluster: [phase][row group][warp of the row][batch row], double-buffered
  // with one barrier each (a peer sends batch k + 2 only after it has received this CTA's
  // batch k + 1, which this CTA sends after reading batch k).
  __shared__ double block_sums[kSmallBackwardMaxBlock * 8];
  __shared__ __align__(16) float received[2][kRowWarps][B];
  __shared__ __align__(8) uint64_t barriers[2];
  // The residual form's g_h slots (BatchRows) alias block_sums, which is written only after the
  // last batch (behind a barrier).
  static_assert(B * kSmallBackwardMaxBlock * sizeof(uint4) <= sizeof(block_sums),
                "the g_h slots fit in block_sums");
  uint4* const gh_slots = reinterpret_cast<uint4*>(block_sums);
  const int cta = static_cast<int>(cg::this_cluster().block_rank());
  const bool exchange = s.row_warps > 1;
  const int group = static_cast<int>(threadIdx.x) / s.slice;
  const int t = static_cast<int>(threadIdx.x) - group * s.slice;
  const int j = cta * s.slice + t;  // this thread's vector of a row: the main program's lane
  const int nv = static_cast<int>(p.hidden / 8);
  const bool live = j < nv;
  // This cluster's block of rows, and this row group's rows of it.
  const int cluster = MULTI ? static_cast<int>(cluster_index()) : 0;
  const int rows = static_cast<int>(p.rows);
  const int block_end =
      MULTI && (cluster + 1) * s.rows_per_cluster < rows ? (cluster + 1) * s.rows_per_cluster
                                                         : rows;
  const int rows_per_group = s.rows_per_group;
  const int first = cluster * s.rows_per_cluster + group * rows_per_group;
  const int end = first + rows_per_group < block_end ? first + rows_per_group : block_end;
  const bool per_head = p.heads != 1;
  constexpr bool residual = RESIDUAL;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  // This warp is warp `row_warp` of its row group's rows (past the row's warps: no vectors).
  const int row_warp = cta * s.slice_warps + (t >> 5);
  const float hidden_f = static_cast<float>(p.hidden);
  const uint32_t batch_bytes = static_cast<uint32_t>(s.row_groups * s.row_warps * B * 4);

  // The weights and the first batch's rows are loaded before the barriers are set up (their
  // latency covers it); later batches at the top of their iteration.
  const int contract = CONTRACT == kRuntimeContract ? p.flags : CONTRACT;
  const bool cast = (contract & kCastBeforeWeightMul) != 0;
  st[10] = gtime_after_i(end + j + row_warp + static_cast<int>(batch_bytes));
  RegisterWeights<WT, 1> w;
  w.load(p, j, s.tpr, (contract & kZeroCenteredGamma) != 0);
  st[11] = gtime();
  int row[B];
  bool valid[B];
  float r[B];
  BatchRows<B> batch;
  batch.gh = gh_slots + threadIdx.x;
  auto load_batch_branchy = [&](int base) {
#pragma unroll
    for (int i = 0; i < B; ++i) {
      row[i] = base + i;
      valid[i] = row[i] < end;
      r[i] = valid[i] ? __ldg(p.rstd + row[i]) : 0.0f;
      batch.g[i] = make_uint4(0u, 0u, 0u, 0u);
      batch.x[i] = batch.g[i];
      if (valid[i] && live) {
        const XT* gr =
            static_cast<const XT*>(p.g) + row_offset(row[i], per_head, p.heads, p.g_addr);
        const XT* xr =
            static_cast<const XT*>(p.x) + row_offset(row[i], per_head, p.heads, p.x_addr);
        batch.g[i] = load_raw<XT>(gr + j * 8);
        batch.x[i] = load_raw<XT>(xr + j * 8);
        if (residual) {
          const XT* ghr =
              static_cast<const XT*>(p.g_h) + row_offset(row[i], per_head, p.heads, p.gh_addr);
          cp_async16(gh_slots + i * static_cast<int>(blockDim.x) + threadIdx.x, ghr + j * 8);
        }
      }
    }
    if (residual) cp_async_commit();
  };
  // Branch-free: every thread loads every row of the batch (a row past the group's end reads
  // row 0, a thread past the row's vectors vector 0) and masks the values; the per-head test
  // once a batch.
  auto load_batch_flat = [&](int base) {
    const int jj = live ? j : 0;
    int rr[B];
    int64_t og[B], ox[B], oh[B];
#pragma unroll
    for (int i = 0; i < B; ++i) {
      row[i] = base + i;
      valid[i] = row[i] < end;
      rr[i] = valid[i] ? row[i] : 0;
    }
    if (per_head) {
#pragma unroll
      for (int i = 0; i < B; ++i) {
        og[i] = row_offset(rr[i], true, p.heads, p.g_addr);
        ox[i] = row_offset(rr[i], true, p.heads, p.x_addr);
        oh[i] = residual ? row_offset(rr[i], true, p.heads, p.gh_addr) : 0;
      }
    } else {
#pragma unroll
      for (int i = 0; i < B; ++i) {
        og[i] = row_offset(rr[i], false, 1, p.g_addr);
        ox[i] = row_offset(rr[i], false, 1, p.x_addr);
        oh[i] = residual ? row_offset(rr[i], false, 1, p.gh_addr) : 0;
      }
    }
#pragma unroll
    for (int i = 0; i < B; ++i) {
      r[i] = __ldg(p.rstd + rr[i]);
      batch.g[i] = load_raw<XT>(static_cast<const XT*>(p.g) + og[i] + jj * 8);
      batch.x[i] = load_raw<XT>(static_cast<const XT*>(p.x) + ox[i] + jj * 8);
      if (residual) {
        cp_async16(gh_slots + i * static_cast<int>(blockDim.x) + threadIdx.x,
                   static_cast<const XT*>(p.g_h) + oh[i] + jj * 8);
      }
    }
    if (residual) cp_async_commit();
#pragma unroll
    for (int i = 0; i < B; ++i) {
      const bool use = valid[i] && live;
      r[i] = valid[i] ? r[i] : 0.0f;
      const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
      batch.g[i] = use ? batch.g[i] : zero;
      batch.x[i] = use ? batch.x[i] : zero;
    }
  };
  auto load_batch = [&](int base) {
    if constexpr (PREFETCH) {
      load_batch_flat(base);
    } else {
      load_batch_branchy(base);
    }
  };
  load_batch(first);
  st[1] = gtime();
  if (exchange) {
    if (threadIdx.x == 0) {
      barrier_init(shared_address(&barriers[0]), 1);
      barrier_init(shared_address(&barriers[1]), 1);
      barrier_init_fence();
    }
    __syncthreads();
    cluster_arrive_relaxed();  // waited on before the first store to a peer
  }
  st[2] = gtime();
  double acc[1][8];
#pragma unroll
  for (int e = 0; e < 8; ++e) acc[0][e] = 0.0;

  int batch_index = 0;
  // Every thread runs the same number of batches; rows past `end` are masked.
  for (int base = first; base < first + rows_per_group; base += B, ++batch_index) {
    if (batch_index > 0) load_batch(base);
    w.hold();
    float dot[B];
#pragma unroll
    for (int i = 0; i < B; ++i) {
      dot[i] = live ? vector_dot<XT>(0.0f, batch.g[i], batch.x[i], w, 0, j) : 0.0f;
    }
    // The main program's first-level butterflies (lane_sum_once), the batch's rows level by level.
    lane_sums_once<B>(dot, s.tpr < 32 ? s.tpr : 32);
    if (batch_index == 0) st[3] = gtime_after(dot[0]);
    if (exchange) {
      const int phase = batch_index & 1;
      const uint32_t bar = shared_address(&barriers[phase]);
      if (threadIdx.x == 0) barrier_arrive_expect(bar, batch_bytes);
      if (batch_index == 0) cluster_wait();  // every peer's barriers are initialised
      float* slot = &received[phase][group * s.row_warps][0];
      send_batch<B>(slot, bar, s, row_warp, lane, dot);
      barrier_wait(bar, static_cast<uint32_t>(batch_index >> 1) & 1u);
      sum_received<B>(slot, s, row_warp, lane, dot);
      if (batch_index == 0) st[4] = gtime_after(dot[0]);
    }
    if (residual) cp_async_wait_all();  // this thread's g_h slots (only it reads them)
#pragma unroll
    for (int i = 0; i < B; ++i) {
      if (!valid[i]) continue;
      const float b = dx_coefficient(r[i], dot[i], hidden_f);
      dx_row_for_flags<XT, 1>(p, row[i], nv, j, s.tpr, r[i], b, w, batch, i, acc, per_head,
                              residual, cast);
      if (batch_index == 0 && i == 0) st[5] = gtime_after_d(acc[0][0]);
    }
  }
  st[6] = gtime_after_d(acc[0][0]);
  if (exchange && batch_index == 0) cluster_wait();  // no rows: match the arrival
  if (residual) __syncthreads();  // every thread is done with its g_h slots (block_sums)

  write_small_dw<MULTI>(p, s, acc[0], block_sums, cluster, cta, t, group, j, live);
  st[7] = gtime();
  st[9] = clock64();
  if (threadIdx.x == 0) {
#pragma unroll
    for (int q = 0; q < 12; ++q) g_stamps[blockIdx.x * 16 + q] = st[q];
  }
#endif
}

}  // namespace miles_rmsnorm
