// miles-ext-kernels first-party RMSNorm forward of a small batch with each row split over the CTAs
// of a thread-block cluster (sm_90 and later).
//
// A small batch's forward is one row's latency, and a CTA's part of it grows with the bytes it
// moves (one CTA a row: 1 x 2048 2.07 us, 1 x 8192 2.56 us on the H200). Here a row's warps are
// spread over the S CTAs of a cluster, each CTA holding a contiguous slice of the row group's
// warps (the same threads, vectors and first-level butterfly as forward_rows_kernel). Every warp
// sends its partial sum of squares to every CTA of the cluster with st.async, and each CTA
// finishes the row sum with the loop-free kernel's second level (row_sums<1, true>: a 32-lane
// butterfly over the warp partials), so y, rstd and h_new have its bits whichever S runs (the
// launcher's choice of S: forward_policy.h).
#pragma once

#include "miles_rmsnorm/cluster.cuh"
#include "miles_rmsnorm/forward.cuh"
#include "miles_rmsnorm/forward_policy.h"

namespace miles_rmsnorm {

// The launch shape of a split row: `ctas` CTAs of `block` threads (whole warps), the row's warps
// (tpr / 32) dealt out in contiguous slices of block / 32.
struct SplitRowShape {
  int ctas;
  int block;
};

inline SplitRowShape split_row_shape(int tpr, int ctas) {
  const int warps = tpr / 32;
  const int per_cta = (warps + ctas - 1) / ctas;
  return {(warps + per_cta - 1) / per_cta, per_cta * 32};
}

// y (and rstd, h_new) of one row per cluster. The cluster's CTA `rank` holds warps
// rank * (blockDim / 32) onwards of the row group; a thread past the group's tpr threads (the last
// CTA of a row whose warps do not divide evenly) holds no vector. FORM as forward_rows_kernel's.
template <typename XT, typename WT, int VPT, int FORM>
__global__ void __launch_bounds__(1024, 1) forward_split_kernel(const ForwardParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kRes = (FORM & kResidual) != 0;
  constexpr bool kCast = (FORM & kCastBeforeWeightMul) != 0;
  constexpr bool kZeroCentered = (FORM & kZeroCenteredGamma) != 0;
  __shared__ __align__(8) uint64_t bar_mem;
  __shared__ __align__(16) float partials[32];
  const int tpr = p.tpr;
  const int row_warps = tpr >> 5;
  const int ctas = static_cast<int>(cluster_size());
  const int warp = static_cast<int>(cluster_rank() * (blockDim.x >> 5) + (threadIdx.x >> 5));
  const int lane = warp * 32 + static_cast<int>(threadIdx.x & 31);  // place in the row group
  const int nv = lane < tpr ? static_cast<int>(p.hidden >> 3) : 0;  // none past the group
  const int row = static_cast<int>(cluster_index());
  const bool per_head = p.heads != 1;
  const uint32_t bar = shared_address(&bar_mem);
  if (threadIdx.x == 0) {
    barrier_init(bar, 1);
    barrier_init_fence();
    barrier_arrive_expect(bar, static_cast<uint32_t>(row_warps * 4));
  }
  __syncthreads();
  cluster_arrive_relaxed();  // published before any peer's first store; waited on below

  uint4 h[VPT];
  load_row_vectors<XT, VPT>(
      static_cast<const XT*>(p.x) + wide_row_offset(row, per_head, p, p.x_addr), true, nv,
      lane, tpr, h);
  RawWeight8<WT> w[VPT];
  load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
  if constexpr (kRes) {
    uint4 uv[VPT];
    load_row_vectors<XT, VPT>(
        static_cast<const XT*>(p.u) + wide_row_offset(row, per_head, p, p.u_addr), true,
        nv, lane, tpr, uv);
    XT* hr = static_cast<XT*>(p.h_new) + static_cast<int64_t>(row) * p.hidden;
    add_residual_row<XT, VPT>(h, uv, hr, nv, lane, tpr);
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  // forward_rows_kernel's sum of squares and first level (row_sums<1, true>, whole warps).
  const float ss = lane_sum_once(sum_of_squares<XT, VPT>(h), 32);
  cluster_wait();  // every CTA's barrier is initialised
  const int lane_in_warp = static_cast<int>(threadIdx.x & 31);
  if (warp < row_warps && lane_in_warp < ctas) {
    const uint32_t dst = shared_address(&partials[warp]);
    store_remote(cluster_address(dst, static_cast<uint32_t>(lane_in_warp)), ss,
                 cluster_address(bar, static_cast<uint32_t>(lane_in_warp)));
  }
  barrier_wait(bar, 0);
  // The second level, as row_sums<1, true>: warp partials one a lane, a 32-lane butterfly.
  const float s = lane_sum_once(lane_in_warp < row_warps ? partials[lane_in_warp] : 0.0f, 32);
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(s, static_cast<float>(p.hidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * p.hidden;
  store_row<XT, WT, VPT, kCast, kZeroCentered>(yr, h, w, r, nv, lane, tpr);
  if (lane == 0) p.rstd[row] = r;
#endif
}

}  // namespace miles_rmsnorm
