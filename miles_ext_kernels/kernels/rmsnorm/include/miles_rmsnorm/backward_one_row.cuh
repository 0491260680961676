// miles-ext-kernels first-party RMSNorm backward of a call of one row (T = 1) in one CTA.
//
// The small-batch program (backward_small.cuh) splits a row's warps over a thread-block cluster
// and exchanges their partial sums through distributed shared memory: at T = 1 that exchange and
// the cluster's launch are most of the call, while one SM holds the whole row (at most 1024
// threads of one vector each). Here the row's warps are one CTA's and exchange their partials
// through shared memory. The arithmetic is the small program's: the same first-level warp
// butterflies, the same second-level butterfly over the warp partials (lane_sums_once over
// warp_partials_width), dx_vector for dx, and dw of a column its one exact product rounded once
// (one_row_vector). So dx and dw keep their bits; the launcher
// (miles_rmsnorm_bwd_small_kernel.cu) takes this kernel at T = 1 (one_row_backward).
#pragma once

#include <cstdint>
#include <cstdlib>

#include "miles_rmsnorm/backward.cuh"

namespace miles_rmsnorm {

// Hidden sizes whose one-row calls take backward_one_row_kernel: up to 4096 (512 threads), where
// one CTA was faster than the cluster (H200, cold L2, docs/kernels.md step 58: 1 x 256 2.43 ->
// 1.95 us, 1 x 2048 2.85 -> 2.47, 1 x 4096 3.08 -> 3.02; with the butterfly widths at compile
// time, 1 x 2048 2.42 and 1 x 4096 2.88 against the same build's 2.50 and 3.05 with run-time
// widths); past it the cluster's CTAs move the row faster (1 x 5120 3.03 against 3.25 in one CTA
// with run-time widths, 1 x 8192 3.14 against 4.06).
constexpr int64_t kOneRowBackwardMaxHidden = 4096;

// Whether the small-batch launcher runs a one-row call (hidden <= 8192) in
// backward_one_row_kernel: the measured choice above, unless MILES_EXT_KERNELS_ONE_ROW_BACKWARD is
// "0" (never) or "1" (at every hidden size), test hooks: either kernel gives the same bits.
inline bool one_row_backward(int64_t hidden) {
  const char* mode = std::getenv("MILES_EXT_KERNELS_ONE_ROW_BACKWARD");
  if (mode != nullptr && mode[0] == '0') return false;
  if (mode != nullptr && mode[0] == '1') return true;
  return hidden <= kOneRowBackwardMaxHidden;
}

// dx and dw of one vector of the row (see the file comment); CAST: the cast-before-weight-mul
// contract. dw goes out as two 16-byte stores where `dw` is 16-byte aligned, else element by
// element (a caller's dw buffer need only be 4-byte aligned).
template <typename XT, bool CAST, bool RESIDUAL, typename Weights>
__device__ __forceinline__ void one_row_vector(const BackwardParams& p, uint4 graw, uint4 xraw,
                                               uint4 ghraw, float r, float b, const Weights& w,
                                               int j) {
  float d[8];
  float dw[8];
  // A column's dw is its one product scaled by r (by 1 under the cast contract), rounded once:
  // the FP64 sum from +0 (accumulate) holds that value exactly (24-bit factors) and rounds it
  // to FP32 once, which is what the FP32 multiply's single rounding gives; adding +0 turns a -0
  // into the +0 that sum gives. Same bits, without the FP64 conversions on the one row's path.
  dx_vector<XT, CAST, RESIDUAL>(graw, xraw, ghraw, r, b, w, 0, j, d, [&](int e, float product) {
    dw[e] = __fadd_rn(CAST ? product : __fmul_rn(product, r), 0.0f);
  });
  store8<XT>(static_cast<XT*>(p.dx) + j * 8, d);
  float* const out = p.dw + static_cast<int64_t>(j) * 8;
  if ((reinterpret_cast<uintptr_t>(p.dw) & 15u) == 0) {
    reinterpret_cast<float4*>(out)[0] = make_float4(dw[0], dw[1], dw[2], dw[3]);
    reinterpret_cast<float4*>(out)[1] = make_float4(dw[4], dw[5], dw[6], dw[7]);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = dw[e];
  }
}

// One row (p.rows == 1, hidden <= 8192: one vector a thread) in one CTA of
// backward_config(hidden).tpr threads; thread j holds vector j of the row (none past nv).
// CONTRACT: the call's kCastBeforeWeightMul and kZeroCenteredGamma flags, at compile time (read
// from the flags, the zero-centred select waited on their constant load: docs/kernels.md step
// 89); RESIDUAL: the kResidual flag.
// WIDTH: warp_partials_width of the row's warps where it has more than one (the first level then
// spans 32 lanes), 1 for a row of one whole warp (H 136-256), 0 for a row of less than one warp
// (its width read from blockDim): the same butterflies with their widths known at compile time,
// so no jump table on the row's path (3-8% of a one-row call at H 512-4096, docs/kernels.md step
// 58; step 88 for the whole warp).
template <typename XT, typename WT, bool RESIDUAL, int WIDTH, int CONTRACT>
__global__ void __launch_bounds__(1024, 1) backward_one_row_kernel(const BackwardParams p) {
  constexpr bool cast = (CONTRACT & kCastBeforeWeightMul) != 0;
  __shared__ float partials[32];
  const int j = static_cast<int>(threadIdx.x);
  const int tpr = static_cast<int>(blockDim.x);
  const int nv = static_cast<int>(p.hidden / 8);
  const bool live = j < nv;
  const int jj = live ? j : 0;  // a thread past the row's vectors reads vector 0, adds nothing
  RegisterWeights<WT, 1> w;
  w.load(p, j, tpr, (CONTRACT & kZeroCenteredGamma) != 0);
  const float r = __ldg(p.rstd);
  const uint4 graw = load_raw<XT>(static_cast<const XT*>(p.g) + jj * 8);
  const uint4 xraw = load_raw<XT>(static_cast<const XT*>(p.x) + jj * 8);
  uint4 ghraw = make_uint4(0u, 0u, 0u, 0u);
  if (RESIDUAL) ghraw = load_raw<XT>(static_cast<const XT*>(p.g_h) + jj * 8);
  w.hold();
  const DxCoefficient coefficient = DxCoefficient::of(p.hidden);
  // From +0 tied to the rstd, whose load then goes out with the row's (zero_tied_to). Summed on
  // every thread (one past the row's vectors has read vector 0) and selected, not branched
  // around: dx_vector then reuses the widened g and x and the products g * w from here.
  const float own = vector_dot<XT>(zero_tied_to(r, p.rows), graw, xraw, w, 0, j);
  float dot[1] = {live ? own : 0.0f};
  lane_sums_once<1>(dot, WIDTH > 0 ? 32 : tpr);
  if constexpr (WIDTH > 1) {
    const int row_warps = tpr / 32;
    const int lane = j & 31;
    if (lane == 0) partials[j >> 5] = dot[0];
    __syncthreads();
    float partial[1] = {lane < row_warps ? partials[lane] : 0.0f};
    lane_sums_once<1>(partial, WIDTH);
    dot[0] = __shfl_sync(0xffffffffu, partial[0], 0);
  }
  if (!live) return;
  one_row_vector<XT, cast, RESIDUAL>(p, graw, xraw, ghraw, r, coefficient(r, dot[0]), w, j);
}

}  // namespace miles_rmsnorm
