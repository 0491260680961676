// miles-ext-kernels first-party RMSNorm forward:
//   h = round(x + u) (residual form), r = 1 / sqrt(mean(h^2) + eps) in FP32 (IEEE), and
//   y = round((h * r) * w_eff) (default) or round(round(h * r) * w_eff) (cast before weight mul),
//   w_eff = w or 1 + w (zero-centred gamma, in FP32).
// A row's arithmetic depends on the hidden size only (config.h), never on T or the grid.
#pragma once

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/device.cuh"

namespace miles_rmsnorm {

// y of one row, specialised on the contract (no per-element select): round((h * r) * w_eff) or
// round(round(h * r) * w_eff). Index: the vector index type (32-bit in the loop-free kernel).
// WIDEN: h and w widened by moving bits (element), the same values.
template <typename XT, typename WT, int VPT, bool CAST, bool ZERO_CENTERED, bool WIDEN = false,
          typename Index>
__device__ __forceinline__ void store_row(XT* __restrict__ yr, const uint4 (&h)[VPT],
                                          const RawWeight8<WT> (&w)[VPT], float r, Index nv,
                                          int lane, int tpr) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const Index j = lane + static_cast<Index>(k) * tpr;
    if (j < nv) {
      float out[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        float n = element<XT, WIDEN>(h[k], e) * r;
        if (CAST) n = round_through<XT>(n);
        const float wk = WIDEN ? w[k].widened(e) : w[k].get(e);
        out[e] = n * effective_weight(wk, ZERO_CENTERED);
      }
      store8_vector<XT>(yr + j * 8, out);
    }
  }
}

// This thread's VPT vectors of one row (vector k at lane + k * tpr; zeros past nv and for a row
// that is not `valid`). The loop-free kernels' loads of x and u; KEEP: with an L2 evict_last
// policy (load_raw_keep).
template <typename XT, int VPT, bool KEEP = false>
__device__ __forceinline__ void load_row_vectors(const XT* __restrict__ row, bool valid, int nv,
                                                 int lane, int tpr, uint4 (&out)[VPT]) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int j = lane + k * tpr;
    out[k] = valid && j < nv ? load_raw_as<XT, KEEP>(row + j * 8) : make_uint4(0u, 0u, 0u, 0u);
  }
}

// Whether the streaming forward kernels have an instance that loads rows with an L2 evict_last
// policy (load_raw_keep; their KEEP parameter): two vectors a thread with 2-byte weights. With FP32
// weights, and in the residual form of the 32-register loop-free kernel, the policy's register
// made ptxas spill (docs/kernels.md, step 72). Which calls take it is the launcher's
// (forward_policy.h: forward_keep_rows).
template <typename WT, int VPT>
constexpr bool kKeepRows = VPT == 2 && sizeof(WT) == 2;

// sum_of_squares (below) of a thread's vectors already widened (v[k][e]: element e of vector k).
template <int VPT>
__device__ __forceinline__ float sum_of_squares(const float (&v)[VPT][8]) {
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) ss += v[k][e] * v[k][e];
  }
  return ss;
}

// The FP32 sum of squares of this thread's vectors of a row, in normalize_rows' order (a row's
// bits depend on it; the row-loop kernels keep their own copy of the loop, whose accumulation
// into the caller's zeroed sums compiles differently). WIDEN: see element.
template <typename XT, int VPT, bool WIDEN = false>
__device__ __forceinline__ float sum_of_squares(const uint4 (&h)[VPT]) {
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float v = element<XT, WIDEN>(h[k], e);
      ss += v * v;
    }
  }
  return ss;
}

// The contract of a call as the row loop uses it; the kernels read it once, before the loop.
struct RowContract {
  bool cast;
  bool zero_centered;
  float hidden_f;
};

__device__ __forceinline__ RowContract row_contract(const ForwardParams& p) {
  return {(p.flags & kCastBeforeWeightMul) != 0, (p.flags & kZeroCenteredGamma) != 0,
          static_cast<float>(p.hidden)};
}

// r = 1 / sqrt(mean(h^2) + eps) in FP32 (IEEE division and square root) from a row's sum of
// squares: the one expression every forward kernel uses.
__device__ __forceinline__ float row_rstd(float sum_of_squares, float hidden_f, float eps) {
  return 1.0f / sqrtf(sum_of_squares / hidden_f + eps);
}

__device__ __forceinline__ float row_rstd(float sum_of_squares, RowContract c, float eps) {
  return row_rstd(sum_of_squares, c.hidden_f, eps);
}

// rstd_fast(v): 1.0f / sqrtf(v) with the same bits, without branches, for v whose bits lie in
// [kRstdFastMinBits, kRstdFastEndBits) (rstd_fast_range). It is the fast path that ptxas (sm_90a,
// nvcc 13.0) emits for sqrt.rn.f32 and then for rcp.rn.f32, written out: ptxas puts each of those
// behind a range test and a branch to its slow path, so that a thread's several rows' rstds ran
// one after another (docs/kernels.md, step 87). The lower bound is ptxas's own test for sqrt's
// fast path (about 3.9e-31); below 2^127 sqrt(v) and its reciprocal stay normal, where the
// reciprocal's fast path holds. Checked against 1.0f / sqrtf(v) on every float of the range on
// the H200 (tests/gpu, test_rstd_fast_matches_the_ieee_rstd_on_every_float_of_its_range); used
// on sm_90 only (rows_rstd), the one architecture it was checked on.
constexpr uint32_t kRstdFastMinBits = 0x0d000000u;
constexpr uint32_t kRstdFastEndBits = 0x7f000000u;

__device__ __forceinline__ bool rstd_fast_range(float v) {
  return __float_as_uint(v) - kRstdFastMinBits < kRstdFastEndBits - kRstdFastMinBits;
}

// sqrt.rn(v) by ptxas's fast path (rsqrt.approx's y, s = v * y, two FMAs) for v in
// rstd_fast's range; `y` is left for rstd_seeded's reciprocal.
__device__ __forceinline__ float sqrt_fast(float v, float& y) {
  float s, h, e, q;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
  asm("mul.ftz.f32 %0, %1, %2;" : "=f"(s) : "f"(v), "f"(y));
  asm("mul.ftz.f32 %0, %1, 0f3F000000;" : "=f"(h) : "f"(y));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(e) : "f"(-s), "f"(s), "f"(v));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(q) : "f"(e), "f"(h), "f"(s));
  return q;
}

__device__ __forceinline__ float rstd_fast(float v) {
  float y, r, t, nt;
  const float q = sqrt_fast(v, y);
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(q));
  asm("fma.rn.f32 %0, %1, %2, 0fBF800000;" : "=f"(t) : "f"(r), "f"(q));
  asm("neg.ftz.f32 %0, %1;" : "=f"(nt) : "f"(t));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(r), "f"(nt), "f"(r));  // rcp.rn(q)
  return r;
}

// rstd_seeded(v): rstd_fast's bits with one MUFU operation less on the path, for v in
// rstd_fast's range but for four floats every two binades (rstd_seeded_range). The square root is
// rstd_fast's; its reciprocal is the same Newton step (t = y * q - 1, r = y - y * t) seeded with
// rsqrt.approx's y, already about 1 / q, where rstd_fast (as ptxas) seeds it with rcp.approx(q)
// (docs/kernels.md, step 105). That seed is a little further from 1 / q, and the step misses the
// rounding on 456 floats of the range (call 2 of session 70): four mantissas, each at one
// exponent parity (0x7ffffe and 0x7fffff with an even biased exponent, 0x1fb52f and 0x3dec0d
// with an odd one; the sequence scales exactly by 2^-k when v scales by 4^k), which
// rstd_seeded_range rejects. Checked against 1.0f / sqrtf(v) on every float of the range on an
// H100 (tests/gpu, test_rstd_fast_matches_the_ieee_rstd_on_every_float_of_its_range). Used by
// warp_row_rstd, one row a thread; rows_rstd keeps rstd_fast, whose plain range test costs a
// thread of several rows fewer instructions (its kernel at 8192 x 256 was 0.13 us slower warm
// with this one, call 4).
__device__ __forceinline__ float rstd_seeded(float v) {
  float y, t, r;
  const float q = sqrt_fast(v, y);
  asm("fma.rn.f32 %0, %1, %2, 0fBF800000;" : "=f"(t) : "f"(y), "f"(q));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(y), "f"(-t), "f"(y));  // rcp.rn(q)
  return r;
}

// A float's mantissa and its biased exponent's lowest bit: what rstd_seeded's rounding depends on.
__host__ __device__ __forceinline__ constexpr uint32_t rstd_seeded_key(uint32_t bits) {
  return bits & 0x00ffffffu;
}

// rstd_seeded_key of the floats of the range that rstd_seeded rounds the other way: two
// neighbours at an even exponent (kRstdSeededMissPair and the next), two more at an odd one.
constexpr uint32_t kRstdSeededMissPair = 0x007ffffeu;
constexpr uint32_t kRstdSeededMissOddA = 0x009fb52fu;
constexpr uint32_t kRstdSeededMissOddB = 0x00bdec0du;

__device__ __forceinline__ bool rstd_seeded_range(float v) {
  const uint32_t key = rstd_seeded_key(__float_as_uint(v));
  return rstd_fast_range(v) && key - kRstdSeededMissPair > 1u && key != kRstdSeededMissOddA &&
         key != kRstdSeededMissOddB;
}

// row_rstd, the same bits, for a row of at most one warp (every lane holding its sum): on sm_90
// rstd_seeded runs unconditionally, and a uniform branch after it takes 1.0f / sqrtf where the
// mean square lies outside rstd_seeded's range. ptxas's own 1.0f / sqrtf tests the reciprocal's
// range between the square root and the reciprocal, on the path (docs/kernels.md, steps 104 and
// 105). Rows of several warps keep row_rstd: there the two paths' registers made ptxas read the
// thread and CTA indices again behind the branch, 0.03 us slower at 1 x 2048 on an H100.
__device__ __forceinline__ float warp_row_rstd(float sum_of_squares, float hidden_f, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  const float v = sum_of_squares / hidden_f + eps;  // row_rstd's operand
  float r = rstd_seeded(v);
  if (!rstd_seeded_range(v)) r = 1.0f / sqrtf(v);
  return r;
#else
  return row_rstd(sum_of_squares, hidden_f, eps);
#endif
}

// row_rstd of ROWS rows (r[i] from ss[i]), the same bits. On sm_90, where every row's mean square
// plus eps lies in rstd_fast's range (one test for all, uniform across a warp whose lanes hold the
// same sums), the rows' rstd_fast sequences, which ptxas interleaves; else row_rstd, row by row.
template <int ROWS>
__device__ __forceinline__ void rows_rstd(const float (&ss)[ROWS], float hidden_f, float eps,
                                          float (&r)[ROWS]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  bool fast = true;
#pragma unroll
  for (int i = 0; i < ROWS; ++i) {
    r[i] = ss[i] / hidden_f + eps;  // row_rstd's operand
    fast = fast && rstd_fast_range(r[i]);
  }
  if (fast) {
#pragma unroll
    for (int i = 0; i < ROWS; ++i) r[i] = rstd_fast(r[i]);
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < ROWS; ++i) r[i] = row_rstd(ss[i], hidden_f, eps);
}

// y of one row under the call's contract (a uniform branch to the specialised store).
template <typename XT, typename WT, int VPT, typename Index>
__device__ __forceinline__ void store_row_for(RowContract c, XT* __restrict__ yr,
                                              const uint4 (&h)[VPT],
                                              const RawWeight8<WT> (&w)[VPT], float r,
                                              Index nv, int lane, int tpr) {
  if (c.cast) {
    if (c.zero_centered) {
      store_row<XT, WT, VPT, true, true>(yr, h, w, r, nv, lane, tpr);
    } else {
      store_row<XT, WT, VPT, true, false>(yr, h, w, r, nv, lane, tpr);
    }
  } else if (c.zero_centered) {
    store_row<XT, WT, VPT, false, true>(yr, h, w, r, nv, lane, tpr);
  } else {
    store_row<XT, WT, VPT, false, false>(yr, h, w, r, nv, lane, tpr);
  }
}

// The residual form's h_new = round(h + u) of one vector (eight elements, summed in FP32 and
// rounded once to the activation type). WIDEN: see element.
template <typename XT, bool WIDEN = false>
__device__ __forceinline__ uint4 residual_sum(uint4 h, uint4 u) {
  float sum[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) sum[e] = element<XT, WIDEN>(h, e) + element<XT, WIDEN>(u, e);
  return pack8<XT>(sum);
}

// The residual form's h_new = round(h + u) for one row's vectors: kept in h (what gets
// normalised) and stored at hr. Index: the vector index type.
template <typename XT, int VPT, typename Index>
__device__ __forceinline__ void add_residual_row(uint4 (&h)[VPT], const uint4 (&u)[VPT],
                                                 XT* __restrict__ hr, Index nv, int lane,
                                                 int tpr) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const Index j = lane + static_cast<Index>(k) * tpr;
    if (j < nv) {
      h[k] = residual_sum<XT>(h[k], u[k]);
      store_vector(hr + j * 8, h[k]);
    }
  }
}

// The rest of an iteration once its R rows h (as stored: h_new in the residual form) are in
// registers: FP32 sums of squares, the row reduction, r = 1 / sqrt(mean + eps) (IEEE), y per
// contract and rstd. Shared by forward_kernel and forward_ring_kernel, so both give the same bits.
template <typename XT, typename WT, int VPT, int R>
__device__ __forceinline__ void normalize_rows(uint4 (&h)[R][VPT], float (&ss)[R],
                                               const int64_t (&row)[R], const bool (&valid)[R],
                                               const RawWeight8<WT> (&w)[VPT],
                                               RowScratch<R>& scratch, const ForwardParams& p,
                                               RowContract c, XT* __restrict__ y, int64_t nv,
                                               int lane, int tpr) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float v = unpack<XT>(h[i][k], e);
        ss[i] += v * v;
      }
    }
  }
  row_sums<R>(ss, tpr, scratch);
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) launder(h[i][k]);
  }
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!valid[i]) continue;
    const float r = row_rstd(ss[i], c, p.eps);
    store_row_for<XT, WT, VPT>(c, y + row[i] * p.hidden, h[i], w, r, nv, lane, tpr);
    if (lane == 0) p.rstd[row[i]] = r;
  }
}

// KEEP: x and u loaded with an L2 evict_last policy (kKeepRows instances only; same bits).
template <typename XT, typename WT, int VPT, bool KEEP = false>
__global__ void __launch_bounds__(1024, 1) forward_kernel(const ForwardParams p) {
  static_assert(!KEEP || kKeepRows<WT, VPT>, "the evict_last instance of kKeepRows kernels only");
  constexpr int R = forward_rows_per_group(VPT);
  __shared__ __align__(16) float scratch_mem[2 * R * 32];
  const int tpr = p.tpr;
  const int groups = p.groups;
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));  // threadIdx.x / tpr
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<R> scratch = make_row_scratch<R>(scratch_mem, tpr, group);
  const int64_t nv = p.hidden / 8;
  const bool residual = (p.flags & kResidual) != 0;
  const RowContract contract = row_contract(p);
  const XT* __restrict__ x = static_cast<const XT*>(p.x);
  const XT* __restrict__ u = static_cast<const XT*>(p.u);
  const WT* __restrict__ wp = static_cast<const WT*>(p.w);
  XT* __restrict__ y = static_cast<XT*>(p.y);
  XT* __restrict__ h_new = static_cast<XT*>(p.h_new);

  RawWeight8<WT> w[VPT];
  load_raw_weights<WT, VPT>(wp, nv, lane, tpr, w);

  // When the grid gives every row a group of its own (small T), a group takes one row per
  // iteration instead of R: the rows spread over more CTAs. Which CTA computes a row does not
  // change its bits.
  const int active = static_cast<int64_t>(gridDim.x) * groups >= p.rows ? 1 : R;
  const int64_t rows_per_iter = static_cast<int64_t>(groups) * active;
  const int64_t step = static_cast<int64_t>(gridDim.x) * rows_per_iter;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * rows_per_iter; base < p.rows;
       base += step) {
    int64_t row[R];
    bool valid[R];
    uint4 h[R][VPT];
    float ss[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      row[i] = base + group + static_cast<int64_t>(i) * groups;
      valid[i] = i < active && row[i] < p.rows;
      ss[i] = 0.0f;
#pragma unroll
      for (int k = 0; k < VPT; ++k) h[i][k] = make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      if (valid[i]) {
        const XT* xr = x + row_offset(row[i], p.heads, p.x_addr);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
          const int64_t j = lane + static_cast<int64_t>(k) * tpr;
          if (j < nv) h[i][k] = load_raw_as<XT, KEEP>(xr + j * 8);
        }
      }
    }
    if (residual) {
      uint4 uv[R][VPT];
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const XT* ur = u + row_offset(valid[i] ? row[i] : 0, p.heads, p.u_addr);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
          const int64_t j = lane + static_cast<int64_t>(k) * tpr;
          uv[i][k] = (valid[i] && j < nv) ? load_raw_as<XT, KEEP>(ur + j * 8)
                                          : make_uint4(0u, 0u, 0u, 0u);
        }
      }
#pragma unroll
      for (int i = 0; i < R; ++i) {
        if (valid[i]) {
          add_residual_row<XT, VPT>(h[i], uv[i], h_new + row[i] * p.hidden, nv, lane, tpr);
        }
      }
    }
    // The rows' loads are issued: only now may the weights be widened (a widening hoisted
    // before the loop would wait for the weights before the first rows are requested).
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].hold();
    normalize_rows<XT, WT, VPT, R>(h, ss, row, valid, w, scratch, p, contract, y, nv, lane,
                                   tpr);
  }
}

// Threads an SM holds: 1536 on sm_86 / sm_87 / sm_89 / sm_120 (where the kernel keeps one
// 1024-thread CTA's worth of registers), 2048 on the others.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                               __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
constexpr int kThreadsPerSm = 1536;
#else
constexpr int kThreadsPerSm = 2048;
#endif

// CTAs of 1024 threads an SM must hold of forward_rows_kernel (its register budget): one for a
// small batch (up to 64 registers: its weights, row and residual all in flight at once), else
// all the SM's threads (32 registers, so that an SM holds 2048 threads' rows).
template <bool SMALL_BATCH>
constexpr int forward_rows_min_blocks() {
  return SMALL_BATCH ? 1 : kThreadsPerSm / 1024;
}

// The call's form as the loop-free kernel takes it: the flags that choose its arithmetic
// (kResidual | kCastBeforeWeightMul | kZeroCenteredGamma), a template parameter, so that each
// instance holds the code of one form only.
constexpr int kForwardFormMask = kResidual | kCastBeforeWeightMul | kZeroCenteredGamma;

// The loop-free kernels' end of a row: rstd from the row's sum of squares, y stored (with FP32
// weights loaded LATE, one vector's weights at a time: vector k of the row is vector 0 of the row
// from k * tpr; else from `w`), then rstd by lane 0. Shared by the one-row and several-row bodies
// so that both give a row the same bits.
template <typename XT, typename WT, int VPT, bool LATE, bool CAST, bool ZERO_CENTERED>
__device__ __forceinline__ void finish_loop_free_row(const ForwardParams& p, int row, float ss,
                                                     const uint4 (&h)[VPT],
                                                     const RawWeight8<WT> (&w)[VPT], int nv,
                                                     int lane, int tpr) {
  const float r = row_rstd(ss, static_cast<float>(p.hidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * p.hidden;
  if constexpr (LATE) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int skip = k * tpr;
      RawWeight8<WT> wk[1];
      load_raw_weights<WT, 1>(static_cast<const WT*>(p.w) + skip * 8, nv - skip, lane, tpr, wk);
      const uint4 hk[1] = {h[k]};
      store_row<XT, WT, 1, CAST, ZERO_CENTERED>(yr + skip * 8, hk, wk, r, nv - skip, lane, tpr);
    }
  } else {
    store_row<XT, WT, VPT, CAST, ZERO_CENTERED>(yr, h, w, r, nv, lane, tpr);
  }
  if (lane == 0) p.rstd[row] = r;
}

// forward_rows_kernel's body with ROWS rows a group (see there): the plain form, 32 registers,
// FP32 weights loaded late at every VPT: loaded with the rows, ptxas spilled 4-8 bytes here and
// 16384 / 65536 x 256 measured 3% slower (docs/kernels.md, step 67).
template <typename XT, typename WT, int VPT, int FORM, int ROWS>
__device__ __forceinline__ void forward_rows_multi(const ForwardParams& p) {
  constexpr bool LATE_WEIGHTS = sizeof(WT) == 4;
  constexpr bool kCast = (FORM & kCastBeforeWeightMul) != 0;
  constexpr bool kZeroCentered = (FORM & kZeroCenteredGamma) != 0;
  __shared__ __align__(16) float scratch_mem[2 * ROWS * 32];
  const int tpr = p.tpr;
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));  // threadIdx.x / tpr
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<ROWS> scratch = make_row_scratch<ROWS>(scratch_mem, tpr, group);
  const int nv = static_cast<int>(p.hidden >> 3);
  const int base = static_cast<int>(blockIdx.x) * p.groups * ROWS + group;
  const bool per_head = p.heads != 1;
  int row[ROWS];
  bool valid[ROWS];
  uint4 h[ROWS][VPT];
#pragma unroll
  for (int i = 0; i < ROWS; ++i) {
    row[i] = base + i * p.groups;
    valid[i] = row[i] < static_cast<int>(p.rows);
    load_row_vectors<XT, VPT>(static_cast<const XT*>(p.x) +
                                  wide_row_offset(valid[i] ? row[i] : 0, per_head, p, p.x_addr),
                              valid[i], nv, lane, tpr, h[i]);
  }
  RawWeight8<WT> w[VPT];
  if constexpr (!LATE_WEIGHTS) {
    load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].hold();
  }
  float ss[ROWS];
#pragma unroll
  for (int i = 0; i < ROWS; ++i) ss[i] = sum_of_squares<XT, VPT>(h[i]);
  row_sums<ROWS, true>(ss, tpr, scratch);
#pragma unroll
  for (int i = 0; i < ROWS; ++i) {
    if (!valid[i]) return;  // rows increase with i: the rest are past the end too
#pragma unroll
    for (int k = 0; k < VPT; ++k) launder(h[i][k]);
    finish_loop_free_row<XT, WT, VPT, LATE_WEIGHTS, kCast, kZeroCentered>(p, row[i], ss[i], h[i],
                                                                          w, nv, lane, tpr);
  }
}

// The forward of a batch whose grid gives every row a row group of its own (grid * groups >=
// rows, fewer than 2^31 row slots): one row per group and no row loop, 32-bit row indices. A
// small batch's time is the instruction path from launch to the last store of one warp, and this
// kernel's is the shortest; a large batch streams through it at 2-byte weights with 32 registers
// a thread, so that an SM holds 2048 threads' rows in flight (spec.FORWARD_ROWS_HIDDEN). Same
// arithmetic as normalize_rows, so the same bits: the squares are summed in the same order, and
// row_sums<1> sums a row's warp partials in a 32-lane butterfly whose extra levels only add
// zeros (sums of squares are never -0).
// FORM: the call's form (kForwardFormMask bits), fixed at compile time: the kernel holds no
// branch on the contract or the residual (with the four contracts' stores and the residual's
// block in one kernel, a small call measured 0.1-0.2 us slower; docs/kernels.md, step 43).
// SMALL_BATCH: small batches (forward_small_batch_rows), where a call's time is one row's latency:
// up to 64 registers a thread, so the residual form's loads go out together (at 32 they spilled
// 8 bytes; 0.05-0.15 us a call, step 43). Past it the kernel streams at 32 registers, and FP32
// weights of two vectors a thread or more are loaded late (LATE_WEIGHTS): after the row reduction
// instead of with the row, one vector's at a time, so that sixteen FP32 weights do not hold
// registers across it (their latency is then hidden by the other CTAs of the SM; a small batch
// keeps the early load, whose latency overlaps the row's). With one vector a thread (H <= 256)
// the eight FP32 weights fit next to the row and load with it: 4096 x 256 3.15 -> 3.0 us on the
// H200 (docs/kernels.md, step 67).
// ROWS (config.h's kForwardWideRows; the plain form past the spread window only): each group
// computes ROWS rows, rows base + group, base + groups + group, ... of its CTA's ROWS * groups,
// with every row's loads issued before the first row's sum, so that a thread holds ROWS rows in
// flight instead of one. Each row's arithmetic is the one-row kernel's (the same sums,
// butterflies and stores), so the same bits.
// KEEP: x loaded with an L2 evict_last policy (the plain form of a large batch at kKeepRows
// only; same bits).
template <typename XT, typename WT, int VPT, bool SMALL_BATCH, int FORM, int ROWS = 1,
          bool KEEP = false>
__global__ void __launch_bounds__(1024, forward_rows_min_blocks<SMALL_BATCH>())
    forward_rows_kernel(const ForwardParams p) {
  static_assert(ROWS == 1 || (!SMALL_BATCH && (FORM & kResidual) == 0),
                "several rows a group: the plain form of a large batch only");
  static_assert(!KEEP || (ROWS == 1 && !SMALL_BATCH && (FORM & kResidual) == 0 &&
                          kKeepRows<WT, VPT>),
                "the evict_last instance: the plain form of a large batch, kKeepRows only");
  if constexpr (ROWS > 1) {
    forward_rows_multi<XT, WT, VPT, FORM, ROWS>(p);
    return;
  }
  constexpr bool LATE_WEIGHTS = !SMALL_BATCH && sizeof(WT) == 4 && VPT > 1;
  constexpr bool kRes = (FORM & kResidual) != 0;
  constexpr bool kCast = (FORM & kCastBeforeWeightMul) != 0;
  constexpr bool kZeroCentered = (FORM & kZeroCenteredGamma) != 0;
  __shared__ __align__(16) float scratch_mem[2 * 32];
  const int tpr = p.tpr;
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));  // threadIdx.x / tpr
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<1> scratch = make_row_scratch<1>(scratch_mem, tpr, group);
  const int nv = static_cast<int>(p.hidden >> 3);
  const int row = static_cast<int>(blockIdx.x) * p.groups + group;
  const bool valid = row < static_cast<int>(p.rows);
  const bool per_head = p.heads != 1;

  uint4 h[VPT];
  load_row_vectors<XT, VPT, KEEP>(static_cast<const XT*>(p.x) +
                                      wide_row_offset(valid ? row : 0, per_head, p, p.x_addr),
                                  valid, nv, lane, tpr, h);
  RawWeight8<WT> w[VPT];
  if constexpr (!LATE_WEIGHTS) {
    load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
  }
  if constexpr (kRes) {
    if (valid) {
      uint4 uv[VPT];
      load_row_vectors<XT, VPT>(
          static_cast<const XT*>(p.u) + wide_row_offset(row, per_head, p, p.u_addr), true,
          nv, lane, tpr, uv);
      XT* hr = static_cast<XT*>(p.h_new) + static_cast<int64_t>(row) * p.hidden;
      add_residual_row<XT, VPT>(h, uv, hr, nv, lane, tpr);
    }
  }
  if constexpr (!LATE_WEIGHTS) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].hold();
  }
  float ss[1] = {sum_of_squares<XT, VPT>(h)};
  // Whole-warp groups take the butterflies without a branch on the width (the same additions).
  row_sums<1, true>(ss, tpr, scratch);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  finish_loop_free_row<XT, WT, VPT, LATE_WEIGHTS, kCast, kZeroCentered>(p, row, ss[0], h, w, nv,
                                                                        lane, tpr);
}

// The plain form of rows of one warp (tpr 32, one vector a thread: H 136-256) past the spread
// window, a half-warp a row (forward_policy.h: forward_half_warp), blockDim.x / 16 rows a CTA.
// Lane l of a half holds vectors l and l + 16 of its row, the ones lanes l and l + 16 hold in
// forward_rows_kernel. Adding their sums of squares in the thread is the first level of that
// kernel's butterfly (offset 16: the same two values, in either order), the four levels left run
// over the half-warp, and each vector's y is computed as there, so a row's rstd and y have the
// same bits. A warp computes two rows with one four-level butterfly and one rstd a lane, where
// forward_rows_kernel's two rows a group take two five-level butterflies and two rstds a lane.
// FP32 weights load after the row sum, as forward_rows_kernel's two-row groups load them.
constexpr int kHalfWarp = 16;  // threads of a row in forward_half_warp_kernel

template <typename XT, typename WT, int FORM>
__global__ void __launch_bounds__(1024, kThreadsPerSm / 1024)
    forward_half_warp_kernel(const ForwardParams p) {
  static_assert((FORM & kResidual) == 0, "the plain form only");
  constexpr bool LATE_WEIGHTS = sizeof(WT) == 4;
  constexpr bool kCast = (FORM & kCastBeforeWeightMul) != 0;
  constexpr bool kZeroCentered = (FORM & kZeroCenteredGamma) != 0;
  constexpr int kHalf = kHalfWarp;
  const int lane = static_cast<int>(threadIdx.x) & (kHalf - 1);
  const int row = static_cast<int>(blockIdx.x * (blockDim.x / kHalf) + threadIdx.x / kHalf);
  const bool valid = row < static_cast<int>(p.rows);
  const int nv = static_cast<int>(p.hidden >> 3);
  uint4 h[2];
  load_row_vectors<XT, 2>(static_cast<const XT*>(p.x) +
                              wide_row_offset(valid ? row : 0, p.heads != 1, p, p.x_addr),
                          valid, nv, lane, kHalf, h);
  RawWeight8<WT> w[2];
  if constexpr (!LATE_WEIGHTS) {
    load_raw_weights<WT, 2>(static_cast<const WT*>(p.w), nv, lane, kHalf, w);
#pragma unroll
    for (int k = 0; k < 2; ++k) w[k].hold();
  }
  const uint4 low[1] = {h[0]};
  const uint4 high[1] = {h[1]};
  const float ss = lane_sum(sum_of_squares<XT, 1>(low) + sum_of_squares<XT, 1>(high), kHalf);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < 2; ++k) launder(h[k]);
  finish_loop_free_row<XT, WT, 2, LATE_WEIGHTS, kCast, kZeroCentered>(p, row, ss, h, w, nv, lane,
                                                                      kHalf);
}

// The forward without a residual, its row loads staged through a per-thread cp.async ring of
// kForwardRingStages stages in dynamic shared memory (forward_ring_bytes): the same arithmetic as
// forward_kernel, so the same bits, but the bytes in flight no longer depend on how many CTAs
// the registers let an SM hold (config.h: forward_ring_stages). KEEP: the copies of x with an L2
// evict_last policy (forward_policy.h: forward_keep_ring; same bits).
template <typename XT, typename WT, int VPT, bool KEEP = false>
__global__ void __launch_bounds__(1024, 1) forward_ring_kernel(const ForwardParams p) {
  constexpr int R = forward_rows_per_group(VPT);
  constexpr int D = kForwardRingStages;
  extern __shared__ __align__(16) uint4 ring[];
  __shared__ __align__(16) float scratch_mem[2 * R * 32];
  const int tpr = p.tpr;
  const int groups = p.groups;
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));  // threadIdx.x / tpr
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<R> scratch = make_row_scratch<R>(scratch_mem, tpr, group);
  const int64_t nv = p.hidden / 8;
  const RowContract contract = row_contract(p);
  const XT* __restrict__ x = static_cast<const XT*>(p.x);
  XT* __restrict__ y = static_cast<XT*>(p.y);
  // This thread's 16-byte slot of vector k of row slot i in stage buf.
  auto slot = [&](int buf, int i, int k) {
    return ring + (((buf * R + i) * VPT + k) * static_cast<int>(blockDim.x) +
                   static_cast<int>(threadIdx.x));
  };

  RawWeight8<WT> w[VPT];
  load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);

  const int active = static_cast<int64_t>(gridDim.x) * groups >= p.rows ? 1 : R;
  const int64_t rows_per_iter = static_cast<int64_t>(groups) * active;
  const int64_t step = static_cast<int64_t>(gridDim.x) * rows_per_iter;
  // Starts the copies of the rows of the iteration at `base` into stage `buf` (one commit
  // group, empty past the last row).
  auto issue = [&](int64_t base, int buf) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int64_t row = base + group + static_cast<int64_t>(i) * groups;
      if (i < active && row < p.rows) {
        const XT* xr = x + row_offset(row, p.heads, p.x_addr);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
          const int64_t j = lane + static_cast<int64_t>(k) * tpr;
          if (j < nv) cp_async16_as<KEEP>(slot(buf, i, k), xr + j * 8);
        }
      }
    }
    cp_async_commit();
  };
  const int64_t first = static_cast<int64_t>(blockIdx.x) * rows_per_iter;
#pragma unroll
  for (int d = 0; d < D - 1; ++d) issue(first + d * step, d);
  // The rows' loads are issued: only now may the weights be widened.
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  int buf = 0;
  for (int64_t base = first; base < p.rows; base += step) {
    // Stage (buf + D - 1) mod D was last read by this thread in the previous iteration (each
    // thread reads only its own slots, so no barrier is needed).
    issue(base + (D - 1) * step, buf == 0 ? D - 1 : buf - 1);
    cp_async_wait_pending<D - 1>();
    int64_t row[R];
    bool valid[R];
    uint4 h[R][VPT];
    float ss[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      row[i] = base + group + static_cast<int64_t>(i) * groups;
      valid[i] = i < active && row[i] < p.rows;
      ss[i] = 0.0f;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int64_t j = lane + static_cast<int64_t>(k) * tpr;
        h[i][k] = valid[i] && j < nv ? *slot(buf, i, k) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
    normalize_rows<XT, WT, VPT, R>(h, ss, row, valid, w, scratch, p, contract, y, nv, lane,
                                   tpr);
    buf = buf == D - 1 ? 0 : buf + 1;
  }
  cp_async_wait_all();
}

}  // namespace miles_rmsnorm
