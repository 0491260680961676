// miles-ext-kernels first-party RMSNorm: device helpers (vector I/O, row reductions, exact
// products accumulated in FP64, a grid barrier).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/params.h"

namespace miles_rmsnorm {

// ---- element conversions (round to nearest even) -------------------------------------------
template <typename T>
struct Elem;

template <>
struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
};

template <>
struct Elem<__half> {
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};

template <typename T>
__device__ __forceinline__ float round_through(float v) {
  return Elem<T>::to_float(Elem<T>::from_float(v));
}

// ---- 16-byte vectors of eight 2-byte elements --------------------------------------------------
// Raw 16-byte loads kept packed in registers (half the registers of eight floats) and widened
// on use.
template <typename T>
__device__ __forceinline__ uint4 load_raw(const T* __restrict__ p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

// load_raw with an L2 evict_last policy (createpolicy.fractional, fraction 1.0): the line outranks
// lines loaded or stored without one when L2 picks a line to evict. The streaming forward's row
// loads (KEEP in load_row_vectors and forward_kernel): on the H200 (docs/kernels.md, step 72)
// 65536 x 8192 515.5 -> 496.2 us, 16384 x 8192 129.6 -> 127.4, the residual form's row loop at
// 16384 x 4096 132.8 -> 129.4. sm_80 and later.
template <typename T>
__device__ __forceinline__ uint4 load_raw_keep(const T* __restrict__ p) {
  uint4 v;
  asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
               " ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], pol;\n}"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// load_raw_keep where KEEP, else load_raw.
template <typename T, bool KEEP>
__device__ __forceinline__ uint4 load_raw_as(const T* __restrict__ p) {
  if constexpr (KEEP) {
    return load_raw_keep<T>(p);
  } else {
    return load_raw<T>(p);
  }
}

template <typename T>
__device__ __forceinline__ float unpack(const uint4& raw, int i) {
  return Elem<T>::to_float(reinterpret_cast<const T*>(&raw)[i]);
}

// unpack with BF16 widened by moving its bits: the low element of a 32-bit word shifted up, the
// high one masked in place (the same exact values; one instruction each, where the generic
// conversion takes a byte permute and a shift for the high element). The backward's and the fixed
// forward kernels'; the other forward kernels keep unpack, with whose code their register budgets
// were set.
template <typename T>
__device__ __forceinline__ float widen(const uint4& raw, int i) {
  return unpack<T>(raw, i);
}

template <>
__device__ __forceinline__ float widen<__nv_bfloat16>(const uint4& raw, int i) {
  const unsigned int word = (i >> 1) == 0 ? raw.x : (i >> 1) == 1 ? raw.y : (i >> 1) == 2 ? raw.z
                                                                                          : raw.w;
  return __uint_as_float((i & 1) != 0 ? (word & 0xffff0000u) : (word << 16));
}

// widen where WIDEN, else unpack: the same value (the fixed forward kernels': forward_fixed.cuh).
template <typename T, bool WIDEN>
__device__ __forceinline__ float element(const uint4& raw, int i) {
  if constexpr (WIDEN) {
    return widen<T>(raw, i);
  } else {
    return unpack<T>(raw, i);
  }
}

template <typename T>
__device__ __forceinline__ uint4 pack8(const float (&in)[8]) {
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = Elem<T>::from_float(in[i]);
  return raw;
}

template <typename T>
__device__ __forceinline__ void store8(T* __restrict__ p, const float (&in)[8]) {
  *reinterpret_cast<uint4*>(p) = pack8<T>(in);
}

// One 16-byte global store, as written: ptxas split the forward's plain uint4 stores of y and
// h_new into four 4-byte stores where the packed values did not land in an aligned register quad
// (half of them at VPT = 2); an explicit vector store keeps one instruction (measured on the
// H200: forward 0.7-1.1% faster at T >= 16384).
__device__ __forceinline__ void store_vector(void* p, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w));
}

template <typename T>
__device__ __forceinline__ void store8_vector(T* __restrict__ p, const float (&in)[8]) {
  store_vector(p, pack8<T>(in));
}

// Hides a packed vector's value from the optimiser, so that it re-widens the packed registers
// instead of keeping eight widened floats alive across a reduction (register pressure), or
// widens them only after this point (see RawWeight8::hold).
__device__ __forceinline__ void launder(uint4& v) {
  asm volatile("" : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w));
}

__device__ __forceinline__ void launder(float4& v) {
  asm volatile("" : "+f"(v.x), "+f"(v.y), "+f"(v.z), "+f"(v.w));
}

__device__ __forceinline__ void launder(float& v) { asm volatile("" : "+f"(v)); }

// Zero computed from loaded bits: an `and` with rows >> 32, zero for a call of fewer than 2^32
// rows (or for any other run-time value below 2^32: fixed_tie_source) but unknown to ptxas.
// Folded into a value the row's first use reads, it makes that use wait for the load of `bits`,
// so ptxas issues that load with the row's instead of after them (fixed_tie, zero_tied_to).
__device__ __forceinline__ uint32_t zero_after(uint32_t bits, int64_t rows) {
  uint32_t zero;
  asm("and.b32 %0, %1, %2;" : "=r"(zero) : "r"(bits), "r"(static_cast<uint32_t>(rows >> 32)));
  return zero;
}

// 16 bytes through a coherent global load (ld.global, not the read-only path).
__device__ __forceinline__ uint4 load_coherent16(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Weights kept packed in registers as loaded (one vector of 2-byte values, or two of FP32) and
// widened on use: a load is never waited on until a row needs the value, so the weight fetch
// overlaps the first rows' fetch instead of adding a round trip in front of it.
template <typename W>
struct RawWeight8 {
  uint4 v;
  __device__ __forceinline__ void load(const W* __restrict__ p) {
    v = __ldg(reinterpret_cast<const uint4*>(p));
  }
  // Through a coherent load (ld.global), which ptxas never moves past a CTA barrier; it may move
  // a read-only (__ldg) load there, behind the reduction that waits at the barrier.
  __device__ __forceinline__ void load_coherent(const W* p) { v = load_coherent16(p); }
  __device__ __forceinline__ void zero() { v = make_uint4(0u, 0u, 0u, 0u); }
  // From a copy in shared memory (one 16-byte part).
  __device__ __forceinline__ void from_parts(const uint4* parts) { v = parts[0]; }
  __device__ __forceinline__ float get(int e) const { return unpack<W>(v, e); }
  // The same value, widened by moving bits (widen).
  __device__ __forceinline__ float widened(int e) const { return widen<W>(v, e); }
  // The first word of each 16-byte load (fixed_tie).
  __device__ __forceinline__ uint32_t first_words() const { return v.x; }
  // Keeps the compiler from widening the weights ahead of this point: hoisted out of a row loop,
  // the widening would wait for the weight load before the first rows' loads are issued (two
  // memory round trips instead of one for a small batch).
  __device__ __forceinline__ void hold() { launder(v); }
};

template <>
struct RawWeight8<float> {
  float4 a;
  float4 b;
  __device__ __forceinline__ void load(const float* __restrict__ p) {
    a = __ldg(reinterpret_cast<const float4*>(p));
    b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  }
  __device__ __forceinline__ void load_coherent(const float* p) {
    const uint4 lo = load_coherent16(p);
    const uint4 hi = load_coherent16(p + 4);
    a = make_float4(__uint_as_float(lo.x), __uint_as_float(lo.y), __uint_as_float(lo.z),
                    __uint_as_float(lo.w));
    b = make_float4(__uint_as_float(hi.x), __uint_as_float(hi.y), __uint_as_float(hi.z),
                    __uint_as_float(hi.w));
  }
  __device__ __forceinline__ void zero() {
    a = make_float4(0.f, 0.f, 0.f, 0.f);
    b = a;
  }
  // From a copy in shared memory (two 16-byte parts).
  __device__ __forceinline__ void from_parts(const uint4* parts) {
    a = reinterpret_cast<const float4*>(parts)[0];
    b = reinterpret_cast<const float4*>(parts)[1];
  }
  __device__ __forceinline__ float get(int e) const {
    return e < 4 ? (&a.x)[e] : (&b.x)[e - 4];
  }
  __device__ __forceinline__ float widened(int e) const { return get(e); }
  __device__ __forceinline__ uint32_t first_words() const {
    return __float_as_uint(a.x) ^ __float_as_uint(b.x);
  }
  __device__ __forceinline__ void hold() {
    launder(a);
    launder(b);
  }
};

// The effective weight: w, or 1 + w computed in FP32 (zero-centred gamma).
__device__ __forceinline__ float effective_weight(float w, bool zero_centered) {
  return zero_centered ? 1.0f + w : w;
}

// Loads this thread's VPT weight vectors of a row (zeros past the row end). Index: the vector
// index type (32-bit in the loop-free forward).
template <typename W, int VPT, typename Index>
__device__ __forceinline__ void load_raw_weights(const W* __restrict__ wp, Index nv, int lane,
                                                 int tpr, RawWeight8<W> (&w)[VPT]) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const Index j = lane + static_cast<Index>(k) * tpr;
    if (j < nv) {
      w[k].load(wp + j * 8);
    } else {
      w[k].zero();
    }
  }
}

__device__ __forceinline__ int64_t row_offset(int64_t row, int64_t heads, RowAddress a) {
  if (heads == 1) return row * a.stride;
  return (row / heads) * a.stride + (row % heads) * a.head_stride;
}

// The offset of a row index below 2^31 of contiguous or row-strided rows (heads == 1): one wide
// multiply. The kernels without a per-head form (forward_fixed.cuh) address rows with it alone.
__device__ __forceinline__ int64_t strided_row_offset(int row, RowAddress a) {
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint32_t>(row)) *
                              static_cast<uint64_t>(a.stride));
}

// row_offset for a row index below 2^31 (the backward programs'), with the per-head test hoisted by
// the caller: one wide multiply in the common case, a 32-bit division for per-head views (heads <=
// rows < 2^31), where the 64-bit one is a called routine in front of every row's loads.
__device__ __forceinline__ int64_t row_offset(int row, bool per_head, int64_t heads,
                                              RowAddress a) {
  if (!per_head) return strided_row_offset(row, a);
  const uint32_t n = static_cast<uint32_t>(heads);
  const uint32_t token = static_cast<uint32_t>(row) / n;
  return static_cast<int64_t>(token) * a.stride +
         static_cast<int64_t>(static_cast<uint32_t>(row) - token * n) * a.head_stride;
}

// The offset of a per-head view's row below 2^31 (token row / heads, head row % heads) with the
// division as row_division's multiply and shift (magic, shift for heads < 2^31): no division
// instruction sequence in front of the row's loads.
__device__ __forceinline__ int64_t per_head_row_offset(int row, int64_t heads, unsigned int magic,
                                                       unsigned int shift, RowAddress a) {
  const uint32_t r = static_cast<uint32_t>(row);
  const uint32_t token = divide_row(r, RowDivision{magic, shift});
  const uint32_t head = r - token * static_cast<uint32_t>(heads);
  return static_cast<int64_t>(token) * a.stride + static_cast<int64_t>(head) * a.head_stride;
}

// The forward's row offset for rows below 2^31 (the loop-free, split and fixed kernels; `per_head`
// is p.heads != 1, a constant in the fixed kernels' PER_HEAD instances): row * stride, or the
// token of a per-head view's row by the call's row_division (per_head_row_offset), a multiply
// and a shift. It replaced a 64-bit division (a called routine; the 32-bit one had spilled the
// 32-register kernel, docs/kernels.md step 41) in front of every per-head row's loads (step 93).
__device__ __forceinline__ int64_t wide_row_offset(int row, bool per_head, const ForwardParams& p,
                                                   RowAddress a) {
  if (!per_head) return strided_row_offset(row, a);
  return per_head_row_offset(row, p.heads, p.head_magic, p.head_shift, a);
}

// ---- row reductions over the tpr threads of a row group ----------------------------------------
// Two alternating shared buffers of R * 32 floats: a reduction writes one buffer, synchronises
// and reads it back; the next reduction uses the other buffer, and its barrier orders those
// reads before the buffer is written again two reductions later — one barrier per reduction.
template <int R>
struct RowScratch {
  float* base;  // 2 * R * 32 floats, 16-byte aligned
  int phase;
  int first_warp;  // the CTA-local index of this thread's row group's first warp
  __device__ __forceinline__ float* take() {
    float* buffer = base + phase * (R * 32);
    phase ^= 1;
    return buffer;
  }
};

template <int R>
__device__ __forceinline__ RowScratch<R> make_row_scratch(float* base, int tpr, int group) {
  return RowScratch<R>{base, 0, tpr >= 32 ? group * (tpr >> 5) : 0};
}

// Butterfly sum over the lanes of groups of `width` lanes (a power of two): every lane of a group
// ends with the same bits (each level adds the same two values in either order).
__device__ __forceinline__ float lane_sum(float v, int width) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    if (offset < width) v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

// lane_sum over B independent values (one per row of a batch), with one branch on the (uniform)
// width instead of one per level, and level by level: each value gets lane_sum's additions in its
// order (the same bits), and the B shuffles of a level are independent, so their latencies
// overlap where B chains one after another would add up. The backward's (the forward keeps
// lane_sum, whose code it was tuned with).
template <int B>
__device__ __forceinline__ void add_lane_xor(float (&v)[B], int offset) {
#pragma unroll
  for (int i = 0; i < B; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
}

template <int B>
__device__ __forceinline__ void lane_sums_once(float (&v)[B], int width) {
  switch (width) {
    case 32:
      add_lane_xor<B>(v, 16);
      [[fallthrough]];
    case 16:
      add_lane_xor<B>(v, 8);
      [[fallthrough]];
    case 8:
      add_lane_xor<B>(v, 4);
      [[fallthrough]];
    case 4:
      add_lane_xor<B>(v, 2);
      [[fallthrough]];
    case 2:
      add_lane_xor<B>(v, 1);
      [[fallthrough]];
    default:
      break;
  }
}

// lane_sums_once of one value.
__device__ __forceinline__ float lane_sum_once(float v, int width) {
  float one[1] = {v};
  lane_sums_once<1>(one, width);
  return one[0];
}

// lane_sum_once(v, 32)'s sum, the same bits, from the warp's 32 values in shared memory (`lanes`:
// this warp's own 32 floats, 16-byte aligned, written once): every lane stores its value, then
// reads all 32 and adds them in the butterfly's pairs level by level (c[j] + c[j + o] for j < o,
// o = 16 .. 1: lane j's addition at that level), 31 additions independent within a level after
// one store and eight vector loads, where the butterfly waits on five dependent shuffles. One
// warp's row on an H100 (session 69, floor.cu): 0.03 us faster, warm or cold. The whole warp
// calls it.
__device__ __forceinline__ float warp_tree_sum(float v, float* lanes) {
  lanes[threadIdx.x & 31] = v;
  __syncwarp();
  float c[32];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float4 q = reinterpret_cast<const float4*>(lanes)[k];
    c[4 * k] = q.x;
    c[4 * k + 1] = q.y;
    c[4 * k + 2] = q.z;
    c[4 * k + 3] = q.w;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      if (j < o) c[j] = c[j] + c[j + o];
    }
  }
  return c[0];
}

// Width of the butterfly that sums a row's warp partials (2 .. 32 warps): the smallest power of
// two holding them, at least 2.
__host__ __device__ __forceinline__ constexpr int warp_partials_width(int warps_per_row) {
  return warps_per_row > 16 ? 32 : warps_per_row > 8 ? 16 : warps_per_row > 4 ? 8
         : warps_per_row > 2 ? 4 : 2;
}

// Second level of a row reduction with rows in pairs (R even in row_sums): lane `slot` of each
// width group holds warp partial `slot` of its row (zero past the row's warps); every lane of the
// group ends with the row's sum. The small-batch backward sums its rows' partials the same way
// (lane_sums_once over warp_partials_width), so that a row's sum has the same bits in both
// programs.
template <bool kBranchOnce = false>
__device__ __forceinline__ float sum_warp_partials(float partial, int warps_per_row) {
  const int width = warp_partials_width(warps_per_row);
  return kBranchOnce ? lane_sum_once(partial, width) : lane_sum(partial, width);
}

// Reduces R independent values (one per row in flight) over the tpr threads of a row group: a
// butterfly within each warp, then, for groups of several warps, the warp partials are read one
// per lane and summed by a second butterfly (the two rows of a pair share one butterfly, one per
// half-warp, when a group has at most 16 warps). The order of additions depends on tpr (a
// function of the hidden size) only. Every thread of the CTA must call it (it may synchronise the
// CTA). kBranchOnce: the butterflies of lane_sum_once (the backward's), same bits.
template <int R, bool kBranchOnce = false>
__device__ __forceinline__ void row_sums(float (&v)[R], int tpr, RowScratch<R>& scratch) {
  const int width = tpr < 32 ? tpr : 32;
  if (kBranchOnce && tpr >= 32) {
    // Whole-warp groups (every H >= 256): the full butterfly, no dispatch on the width.
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = lane_sum_once(v[i], 32);
  } else {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      v[i] = kBranchOnce ? lane_sum_once(v[i], width) : lane_sum(v[i], width);
    }
  }
  if (tpr <= 32) return;
  float* buffer = scratch.take();
  const int lane = threadIdx.x & 31;
  if (lane == 0) {
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < R; ++i) buffer[i * 32 + warp] = v[i];
  }
  __syncthreads();
  const int warps_per_row = tpr >> 5;  // 2 .. 32
  const float* partials = buffer + scratch.first_warp;
  if (R % 2 == 0 && warps_per_row <= 16) {
    const int half = lane >> 4;
    const int slot = lane & 15;
#pragma unroll
    for (int i = 0; i < R; i += 2) {
      float s = slot < warps_per_row ? partials[(i + half) * 32 + slot] : 0.0f;
      s = sum_warp_partials<kBranchOnce>(s, warps_per_row);
      v[i] = __shfl_sync(0xffffffffu, s, 0);
      v[i + 1] = __shfl_sync(0xffffffffu, s, 16);
    }
  } else {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float s = lane < warps_per_row ? partials[i * 32 + lane] : 0.0f;
      v[i] = kBranchOnce ? lane_sum_once(s, 32) : lane_sum(s, 32);
    }
  }
}

// ---- exact products accumulated in FP64 ------------------------------------------------------
// The product of two 2-byte floats (g * x, or g * round(x * r)) is exact in FP32; times the FP32
// rstd it has at most 40 significant bits, so the FP64 fused multiply-add below rounds only in
// the addition. FP64 accumulation of exact terms is at least as accurate as an FP32 TwoSum pair
// (53 against about 48 significant bits) and costs one conversion and one DFMA per element.
__device__ __forceinline__ void accumulate(double& acc, float exact_product, double scale) {
  acc = fma(static_cast<double>(exact_product), scale, acc);
}

__device__ __forceinline__ void accumulate(float& acc, float exact_product, float scale) {
  acc = __fmaf_rn(exact_product, scale, acc);
}

// ---- asynchronous global -> shared copies (sm_80+) ---------------------------------------------
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src) {
  const unsigned int dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src));
}

// cp.async of N bytes (4, 8 or 16): 16 as cp_async16 (bypassing L1), fewer through L1, the only
// form cp.async has for them.
template <int N>
__device__ __forceinline__ void cp_async_bytes(void* smem_dst, const void* gmem_src) {
  static_assert(N == 4 || N == 8 || N == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (N == 16) {
    cp_async16(smem_dst, gmem_src);
  } else {
    const unsigned int dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(gmem_src),
                 "n"(N));
  }
}

// cp_async16 with load_raw_keep's L2 evict_last policy: the row copies of the forward ring and of
// the deterministic backward in large calls (their KEEP instances); on the H200 (docs/kernels.md,
// step 74) 65536 x 12288 forward 813.7 -> 782.0 us, 65536 x 6144 backward 597.9 -> 582.3.
__device__ __forceinline__ void cp_async16_keep(void* smem_dst, const void* gmem_src) {
  const unsigned int dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
               " cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, pol;\n}\n"
               ::"r"(dst), "l"(gmem_src));
}

// cp_async16_keep where KEEP, else cp_async16.
template <bool KEEP>
__device__ __forceinline__ void cp_async16_as(void* smem_dst, const void* gmem_src) {
  if constexpr (KEEP) {
    cp_async16_keep(smem_dst, gmem_src);
  } else {
    cp_async16(smem_dst, gmem_src);
  }
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- grid-wide barrier (all CTAs co-resident: cooperative launch) ------------------------------
__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned int fetch_add_acq_rel(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

__device__ __forceinline__ void red_add_release(unsigned int* p, unsigned int v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned int load_relaxed(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void red_add_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void store_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// A one-shot grid barrier over two words (all CTAs co-resident: cooperative launch), found
// zeroed and left zeroed (the workspace as it was handed over, for the next launch or CUDA-graph
// replay).
// counters[0] is the arrival word: CTA 0 adds 2^31 - (grid - 1) and every other CTA adds 1, so
// the arrivals sum to exactly 2^31 — the top bit flips on the last CTA's arrival. One
// acquire-release atomic per CTA; the other CTAs poll the word until it flips, then count their
// departure in counters[1] with a reduction that nothing waits for. The last to arrive resets
// both words in finish(), once every other CTA has departed (no longer reads counters[0]).
// (Each CTA used to take a returning atomic on counters[1] and wait for it in finish(): 264 of
// them on one word, 0.5-1 us on the H200; docs/kernels.md step 96.)
struct GridBarrier {
  unsigned int* counters;
  bool last;  // thread 0 only: this CTA's arrival completed the barrier

  // Every thread of the CTA calls it.
  __device__ __forceinline__ void sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned int add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
      const unsigned int before = fetch_add_acq_rel(counters, add);
      last = ((before ^ (before + add)) & 0x80000000u) != 0u;
      if (!last) {
        while (((before ^ load_acquire(counters)) & 0x80000000u) == 0u) {
#if __CUDA_ARCH__ >= 700
          __nanosleep(32);
#endif
        }
        red_add_release(counters + 1, 1u);  // ordered after the polls
      }
    }
    __syncthreads();
  }

  // Called by thread 0 (others may call it too) once the CTA no longer needs the barrier.
  __device__ __forceinline__ void finish() const {
    if (threadIdx.x != 0 || !last) return;
    while (load_acquire(counters + 1) != gridDim.x - 1u) {
#if __CUDA_ARCH__ >= 700
      __nanosleep(32);
#endif
    }
    store_relaxed(counters, 0u);
    store_relaxed(counters + 1, 0u);
    store_relaxed(counters + 2, 0u);  // GridPace's word: every CTA counted its last before arriving
  }
};

// Iterations a CTA may run ahead of the grid's average before GridPace holds it.
constexpr unsigned int kPaceSlack = 1;

// Pacing between the co-resident CTAs of a grid-barrier launch (one chunk a CTA; docs/kernels.md
// step 107): thread 0 counts each finished iteration in counters[2] as the next one starts, and a
// CTA about to start iteration k waits until the grid has finished (k - kPaceSlack) iterations a
// CTA on average, so that the SMs the memory system serves first leave bandwidth to the others
// and the grid's rows end closer together. Timing only: which rows a CTA reads, and in what order,
// never changes. A CTA whose rows are done tops its count up to `most` (the most iterations any
// CTA runs), so the sum reaches most * grid and no waiter is left behind a CTA with fewer
// iterations; the slowest CTA never waits (its own count and the others' put the sum at
// (k - 1) * grid or more). The word is zero on entry, and GridBarrier::finish, which runs after
// every CTA's last count, zeroes it again. Off, neither member does anything.
struct GridPace {
  unsigned int* word;
  bool on;

  // Every thread of the CTA calls it at the start of iteration k >= 1.
  __device__ __forceinline__ void step(int k) const {
    if (!on) return;
    if (threadIdx.x == 0) {
      red_add_relaxed(word, 1u);
      if (static_cast<unsigned int>(k) > kPaceSlack) {
        const unsigned int need = (static_cast<unsigned int>(k) - kPaceSlack) * gridDim.x;
        while (load_relaxed(word) < need) {
#if __CUDA_ARCH__ >= 700
          __nanosleep(64);
#endif
        }
      }
    }
    __syncthreads();
  }

  // Thread 0 (others may call it), once the CTA's `iterations` are done: its count (one for each
  // iteration after the first) made up to `most`.
  __device__ __forceinline__ void finish(unsigned int iterations, unsigned int most) const {
    if (!on || threadIdx.x != 0) return;
    const unsigned int counted = iterations > 0u ? iterations - 1u : 0u;
    if (most > counted) red_add_relaxed(word, most - counted);
  }
};

}  // namespace miles_rmsnorm
