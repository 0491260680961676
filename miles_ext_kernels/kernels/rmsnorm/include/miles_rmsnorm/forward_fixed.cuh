// miles-ext-kernels first-party RMSNorm forward of a small batch at a hidden size fixed at compile
// time (forward_policy.h: kFixedForwardHidden), with or without a residual.
//
// A small batch's time is one row's instruction path. forward_rows_kernel takes the row group's
// width (tpr) and the hidden size at run time, so its path holds the group arithmetic, the bounds
// of every vector and the butterfly's width; here they are constants, and the second level of the
// row sum adds only the warp partials the row has (fixed_row_sum). The additions are
// forward_rows_kernel's (the dropped ones add zeros), so y, rstd and h_new keep its bits.
// Measured on the H200 (docs/kernels.md): 3-10% of a 2.1-4.7 us call at T = 16-256 without a
// residual (step 45); with one, 0.3-0.45 us of a 2.5-3.6 us call at T = 16-64 (step 47); the
// weights' loads first, 3-9% at T = 1 (step 48); BF16 widened by moving bits, the second level as
// a local tree and y's operands widened before the barrier, 2-3% at T = 1-1024 (step 81); rows of
// one warp and more sizes, 3-22% at T = 1-256 (step 83).
//
// Rows are contiguous or row-strided (heads == 1: row * stride), or with PER_HEAD per-head views
// [T, heads, D] at rows of one warp (D 256 and 512; the launcher's choice). A compile-time form: a
// run-time per-head branch ahead of the row's loads, with its constant loads and 64-bit division
// path, put them out 0.1-0.2 us later in a cold call (step 80); the per-head form divides by a
// multiply and a shift (row_division; step 93).
#pragma once

#include "miles_rmsnorm/forward.cuh"

namespace miles_rmsnorm {

// row_sums<1>'s sum of one row over TPR threads (whole warps), every thread of the row ending
// with it. Its second level is a W-lane butterfly over the warp partials (zeros past the row's
// warps; W: the smallest power of two holding them, warp_partials_width): the levels past W of
// row_sums' 32-lane one only add zeros (sums of squares are never -0). Every lane of a butterfly
// ends with lane 0's sum (its partner adds the same two values, swapped), so each thread computes
// that sum itself from the partials in shared memory: level by level (offset o = W / 2 .. 1),
// c[j] = c[j] + c[j + o] for j < o is lane j's addition, and the first level's additions of zero
// padding are left out (c + 0 = c). A few vector loads and at most W - 1 additions, independent
// within a level, where the butterfly took log2(W) dependent shuffles (docs/kernels.md, step 81).
// A row of one warp (H 256 and 512) is the first level alone, no barrier (step 83), as the same
// tree from the warp's 32 lane values in shared memory (warp_tree_sum, step 103; `buffer`: the
// warp's own 32 floats); a row of half a warp (H 128) row_sums' 16-lane butterfly (step 94).
// Every thread of the CTA calls it (rows of several warps: it synchronises the CTA).
template <int TPR>
__device__ __forceinline__ float fixed_row_sum(float v, float* buffer) {
  constexpr int kWarps = TPR / 32;
  if constexpr (TPR < 32) {
    return lane_sum_once(v, TPR);  // lane_sum(v, TPR)'s additions: row_sums' for tpr < 32
  }
  if constexpr (kWarps == 1) {
    // A row of one warp: row_sums' one butterfly is the whole sum, here from shared memory
    // (buffer: this warp's 32 floats).
    return warp_tree_sum(v, buffer);
  } else {
    v = lane_sum_once(v, 32);
    constexpr int kWidth = warp_partials_width(kWarps);
    if ((threadIdx.x & 31) == 0) buffer[threadIdx.x >> 5] = v;
    __syncthreads();
    float c[kWidth];
#pragma unroll
    for (int j = 0; j < kWidth; ++j) c[j] = j < kWarps ? buffer[j] : 0.0f;
#pragma unroll
    for (int level = 1; level <= 5; ++level) {  // fixed trip counts: unrolled at every width
      const int o = kWidth >> level;
#pragma unroll
      for (int j = 0; j < kWidth / 2; ++j) {
        if (j < o && (level > 1 || j + o < kWarps)) c[j] = c[j] + c[j + o];
      }
    }
    return c[0];
  }
}

// Zero, made from the first word of each of the weights' loads: an `and` with source >> 32, which
// is zero at run time but unknown to ptxas (fixed_tie_source).
// OR-ed into a word of the row, it makes the row's first use wait for the weights, so that ptxas
// issues their loads with the row's; without it ptxas sank them behind the row sum (a second
// memory round trip in a cold call at T = 1; docs/kernels.md, step 80). Cold, the weights land
// with the row, so the wait costs nothing.
template <typename WT, int VPT>
__device__ __forceinline__ uint32_t fixed_tie(const RawWeight8<WT> (&w)[VPT], int64_t source) {
  uint32_t words = 0;
#pragma unroll
  for (int k = 0; k < VPT; ++k) words ^= w[k].first_words();
  return zero_after(words, source);
}

// fixed_tie's source, a call's value below 2^32: the row count (fewer than 2^31 rows for any call
// of the fixed kernels: kFixedRowsMaxRows), or where a CTA is one row, which reads no row count
// (forward_fixed_kernel), x's row stride shifted right by 30 (every addressable stride of 2-byte
// elements is below 2^62), from the parameters' first constant line.
template <int ROWS>
__device__ __forceinline__ int64_t fixed_tie_source(const ForwardParams& p) {
  return ROWS == 1 ? (p.x_addr.stride >> 30) : p.rows;
}

// The compile-time shape and contract of a fixed-size row (the fixed kernels below): VPT whole
// vectors a thread over TPR threads, the call's form FORM (kForwardFormMask bits).
template <int VPT, int TPR, int FORM>
struct FixedRow {
  static_assert(TPR == 16 || (TPR >= 32 && TPR % 32 == 0), "a row of half a warp or whole warps");
  static constexpr int kNv = VPT * TPR;
  static constexpr int kHidden = 8 * kNv;
  static constexpr bool kRes = (FORM & kResidual) != 0;
  static constexpr bool kCast = (FORM & kCastBeforeWeightMul) != 0;
  static constexpr bool kZeroCentered = (FORM & kZeroCenteredGamma) != 0;
};

// forward_rows_kernel<XT, WT, VPT, SMALL_BATCH = true, FORM> at hidden = 8 * VPT * TPR: one row
// a CTA of TPR threads, each holding VPT whole vectors (no bounds), rows at row * stride (heads ==
// 1) or, with PER_HEAD, per-head views (wide_row_offset; see above). The launcher gives it
// forward_rows_kernel's grid and CTAs; rows of one warp may instead come ROWS a CTA, a warp each
// (forward_fixed_rows: forward_config's CTA; rows of one warp have no barrier, so each warp is a
// row of its own). With a residual (kResidual in FORM) the row's u goes out with its x, and h_new
// = round(x + u) (residual_sum) is stored before the row sum, as forward_rows_kernel's
// add_residual_row does. WEIGHTS_FIRST: the weights' loads go out with the row's, tied to its
// first use (fixed_tie); else after the row's, where ptxas places them.
template <typename XT, typename WT, int VPT, int TPR, int FORM, bool WEIGHTS_FIRST, int ROWS = 1,
          bool PER_HEAD = false>
__global__ void __launch_bounds__(1024, forward_rows_min_blocks<true>())
    forward_fixed_kernel(const ForwardParams p) {
  using Row = FixedRow<VPT, TPR, FORM>;
  static_assert(WEIGHTS_FIRST || !Row::kRes, "the residual form loads the weights first");
  static_assert(ROWS == 1 || TPR <= 32, "several rows a CTA: rows of at most a warp (no barrier)");
  // Rows of half a warp share their warp's butterfly, so neither half may leave before it: the
  // plain forms only (the residual form leaves at a row past the end before its loads), two rows
  // a warp.
  static_assert(TPR >= 32 || (!Row::kRes && ROWS % 2 == 0), "rows of half a warp: plain, paired");
  // The second level's warp partials; rows of one warp: each warp's 32 lane values.
  __shared__ __align__(16) float partials[TPR == 32 ? 32 * ROWS : 32];
  // ROWS row groups a CTA: no vector of the row needs a bound.
  __builtin_assume(threadIdx.x < TPR * ROWS);
  const int lane = ROWS == 1 ? static_cast<int>(threadIdx.x)
                             : static_cast<int>(threadIdx.x & (TPR - 1));
  const int row = ROWS == 1 ? static_cast<int>(blockIdx.x)
                            : static_cast<int>(blockIdx.x) * ROWS +
                                  static_cast<int>(threadIdx.x / TPR);
  // One row a CTA: the launcher's grid is one CTA a row (launch_fixed_forward checks it), so the
  // kernel reads no row count, and every field it reads lies in the parameters' first constant
  // line (ForwardParams; the residual form's in the second too).
  const bool valid = ROWS == 1 || row < static_cast<int>(p.rows);

  // The weights through coherent loads, which stay ahead of the row sum's barrier: through
  // __ldg, ptxas sank them past it and the row's exit test, so that x and the weights came in two
  // memory round trips in a row (0.1-0.25 us of a cold call at T = 1; docs/kernels.md, step 45).
  // With the row's loads, tied to the row's first use (fixed_tie), where WEIGHTS_FIRST
  // (fixed_forward_weights_first: always with a residual, whose sums ptxas otherwise placed the
  // weights' loads behind), else after x's.
  const WT* wp = static_cast<const WT*>(p.w);
  RawWeight8<WT> w[VPT];
  auto load_weights = [&] {
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
  };
  uint4 h[VPT];
  uint4 u[VPT];
  if constexpr (Row::kRes) {
    load_weights();
    // Then the row, or nothing for a row past the end (a CTA is one row, or ROWS rows of a warp
    // each, so the whole row group leaves and no barrier waits for it); both rows' vectors
    // unmasked: with a predicate or a branch among their loads, ptxas began widening x, or summing
    // a vector, before the last of u's loads went out, which then waited for a memory round trip (a
    // cold call at T = 1 paid two).
    if (!valid) return;
    const XT* xr = static_cast<const XT*>(p.x) + wide_row_offset(row, PER_HEAD, p, p.x_addr);
    const XT* ur = static_cast<const XT*>(p.u) + wide_row_offset(row, PER_HEAD, p, p.u_addr);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      h[k] = load_raw<XT>(xr + (lane + k * TPR) * 8);
      u[k] = load_raw<XT>(ur + (lane + k * TPR) * 8);
    }
    u[0].x |= fixed_tie<WT, VPT>(w, fixed_tie_source<ROWS>(p));
  } else {
    if constexpr (WEIGHTS_FIRST) load_weights();
    load_row_vectors<XT, VPT>(
        static_cast<const XT*>(p.x) + wide_row_offset(valid ? row : 0, PER_HEAD, p, p.x_addr),
        valid, Row::kNv, lane, TPR, h);
    if constexpr (WEIGHTS_FIRST) h[0].x |= fixed_tie<WT, VPT>(w, fixed_tie_source<ROWS>(p));
    if constexpr (!WEIGHTS_FIRST) load_weights();
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  if constexpr (Row::kRes) {
    XT* hr = static_cast<XT*>(p.h_new) + static_cast<int64_t>(row) * Row::kHidden;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      h[k] = residual_sum<XT, true>(h[k], u[k]);
      store_vector(hr + (lane + k * TPR) * 8, h[k]);
    }
  }
  // y's operands widened once, before the row sum's barrier, where the CTA's warps wait with
  // nothing to issue: the row's elements (its squares use them too) and, where they came with the
  // row (WEIGHTS_FIRST), the effective weights.
  float hf[VPT][8];
  float wf[VPT][8];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      hf[k][e] = element<XT, true>(h[k], e);
      if constexpr (WEIGHTS_FIRST) {
        wf[k][e] = effective_weight(w[k].widened(e), Row::kZeroCentered);
        launder(wf[k][e]);
      }
    }
  }
  const float ss = fixed_row_sum<TPR>(sum_of_squares<VPT>(hf),
                                      TPR == 32 ? partials + 32 * (threadIdx.x >> 5) : partials);
  if (!valid) return;
  const float r = TPR <= 32 ? warp_row_rstd(ss, static_cast<float>(Row::kHidden), p.eps)
                            : row_rstd(ss, static_cast<float>(Row::kHidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * Row::kHidden;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    float out[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {  // store_row's arithmetic
      float n = hf[k][e] * r;
      if (Row::kCast) n = round_through<XT>(n);
      out[e] = n * (WEIGHTS_FIRST ? wf[k][e]
                                  : effective_weight(w[k].widened(e), Row::kZeroCentered));
    }
    store8_vector<XT>(yr + (lane + k * TPR) * 8, out);
  }
  if (lane == 0) p.rstd[row] = r;
}

// The plain forms of BF16 rows of one warp (H 256 and 512, forward_fixed_kernel's sizes) past
// the spread window (forward_policy.h: forward_warp_rows), 4 / VPT rows a warp (kWarpRowsWarps
// warps a CTA): every lane holds vectors lane + 32 k of each of its warp's rows, as
// forward_fixed_kernel's lanes do, and the warp loads them all, then the weights once for its
// rows (with the rows' loads: fixed_tie), sums each row's squares in the thread and over the warp
// in one interleaved butterfly (lane_sums_once), and computes the rows' rstds together
// (rows_rstd), so a row's rstd and y have forward_fixed_kernel's bits. torch.compile's layout at
// these sizes (docs/kernels.md, steps 86-87); each element widened once, and the rows' addresses
// as offsets from the warp's first row, where forward_rows_kernel's several-row groups take a
// generic row address and widening per row (the instruction count was the gap: ncu, 434 against
// Inductor's 268 warp instructions for four rows at H 256).
constexpr int kWarpRowsWarps = 4;

template <int VPT>
constexpr int kWarpRowsPerWarp = 4 / VPT;

// Up to 64 registers (1024 threads an SM), which hold a thread's 32 widened elements. Rows at
// row * stride, or with PER_HEAD per-head views (wide_row_offset, each row's offset of its own).
template <typename XT, typename WT, int VPT, int FORM, bool PER_HEAD = false>
__global__ void __launch_bounds__(32 * kWarpRowsWarps, 1024 / (32 * kWarpRowsWarps))
    forward_fixed_warp_rows_kernel(const ForwardParams p) {
  constexpr int kRows = kWarpRowsPerWarp<VPT>;
  using Row = FixedRow<VPT, 32, FORM>;
  static_assert(!Row::kRes, "the plain forms only");
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int first = (static_cast<int>(blockIdx.x) * kWarpRowsWarps +
                     static_cast<int>(threadIdx.x >> 5)) * kRows;
  const int rows = static_cast<int>(p.rows);  // at most kFixedRowsMaxRows
  if (first >= rows) return;  // a warp of the last CTA past the rows
  const int64_t stride = p.x_addr.stride;  // rows at row * stride (heads == 1)
  const XT* xr = static_cast<const XT*>(p.x) + lane * 8;
  if constexpr (!PER_HEAD) xr += static_cast<int64_t>(first) * stride;
  const WT* wp = static_cast<const WT*>(p.w) + lane * 8;
  RawWeight8<WT> w[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + k * 256);
  uint4 h[kRows][VPT];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int64_t at =
          PER_HEAD ? wide_row_offset(first + i, true, p, p.x_addr) : i * stride;
      h[i][k] = first + i < rows ? load_raw<XT>(xr + at + k * 256) : make_uint4(0u, 0u, 0u, 0u);
    }
  }
  h[0][0].x |= fixed_tie<WT, VPT>(w, p.rows);
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  float hf[kRows][VPT][8];
  float ss[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < 8; ++e) hf[i][k][e] = element<XT, true>(h[i][k], e);
    }
    ss[i] = sum_of_squares<VPT>(hf[i]);
  }
  lane_sums_once<kRows>(ss, 32);
  float r[kRows];
  rows_rstd<kRows>(ss, static_cast<float>(Row::kHidden), p.eps, r);
  float wf[VPT][8];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) wf[k][e] = effective_weight(w[k].widened(e), Row::kZeroCentered);
  }
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(first) * Row::kHidden + lane * 8;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    if (first + i >= rows) return;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      float out[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {  // forward_fixed_kernel's arithmetic
        float n = hf[i][k][e] * r[i];
        if (Row::kCast) n = round_through<XT>(n);
        out[e] = n * wf[k][e];
      }
      store8_vector<XT>(yr + i * Row::kHidden + k * 256, out);
    }
    if (lane == 0) p.rstd[first + i] = r[i];
  }
}

// forward_fixed_kernel's plain form (weights after the row's loads) with two CTAs a row: CTA
// 2 * row + half reads the whole row and sums it exactly as forward_fixed_kernel does (so rstd has
// its bits), but loads the weights of, and stores y of, only vector k = half of its threads (the
// row's first or second half); the first CTA stores rstd. Two vectors a thread; rows at
// row * stride, as forward_fixed_kernel's. Where a small batch leaves SMs idle
// (forward_policy.h: fixed_forward_halves), an SM then receives the row and half the weights
// instead of the row and all of them, and stores half of y: measured on the H200
// (docs/kernels.md, step 71) 3-5% faster at 56-64 x 8192.
template <typename XT, typename WT, int TPR, int FORM>
__global__ void __launch_bounds__(1024, forward_rows_min_blocks<true>())
    forward_fixed_halves_kernel(const ForwardParams p) {
  constexpr int VPT = 2;
  using Row = FixedRow<VPT, TPR, FORM>;
  static_assert(!Row::kRes, "the plain form only");
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);  // one row group a CTA: no vector of the row needs a bound
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x >> 1);
  const int half = static_cast<int>(blockIdx.x & 1);
  const bool valid = row < static_cast<int>(p.rows);
  uint4 h[VPT];
  load_row_vectors<XT, VPT>(
      static_cast<const XT*>(p.x) + strided_row_offset(valid ? row : 0, p.x_addr), valid,
      Row::kNv, lane, TPR, h);
  // Coherent loads, after the row's, as forward_fixed_kernel's (see there).
  RawWeight8<WT> w[1];
  w[0].load_coherent(static_cast<const WT*>(p.w) + (lane + half * TPR) * 8);
  w[0].hold();
  const float ss = fixed_row_sum<TPR>(sum_of_squares<XT, VPT, true>(h), partials);
  if (!valid) return;
  const uint4 mine[1] = {half != 0 ? h[1] : h[0]};
  const float r = row_rstd(ss, static_cast<float>(Row::kHidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * Row::kHidden + half * TPR * 8;
  store_row<XT, WT, 1, Row::kCast, Row::kZeroCentered, true>(yr, mine, w, r, TPR, lane, TPR);
  if (lane == 0 && half == 0) p.rstd[row] = r;
}

}  // namespace miles_rmsnorm
