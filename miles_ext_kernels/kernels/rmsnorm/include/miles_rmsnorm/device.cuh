// miles-ext-kernels first-party RMSNorm: device helpers (vector I/O, row reductions, exact
// products accumulated in FP64, a grid barrier).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

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
template <typename T>
__device__ __forceinline__ void load8(const T* __restrict__ p, float (&out)[8]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = Elem<T>::to_float(e[i]);
}

// Raw 16-byte loads kept packed in registers (half the registers of eight floats) and widened
// on use.
template <typename T>
__device__ __forceinline__ uint4 load_raw(const T* __restrict__ p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

template <typename T>
__device__ __forceinline__ float unpack(const uint4& raw, int i) {
  return Elem<T>::to_float(reinterpret_cast<const T*>(&raw)[i]);
}

template <typename T>
__device__ __forceinline__ void store8(T* __restrict__ p, const float (&in)[8]) {
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = Elem<T>::from_float(in[i]);
  *reinterpret_cast<uint4*>(p) = raw;
}

// Weights: 2-byte types as one vector, FP32 as two.
template <typename W>
__device__ __forceinline__ void load_weight8(const W* __restrict__ p, float (&out)[8]) {
  load8<W>(p, out);
}

template <>
__device__ __forceinline__ void load_weight8<float>(const float* __restrict__ p, float (&out)[8]) {
  const float4 a = __ldg(reinterpret_cast<const float4*>(p));
  const float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
  out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
}

__device__ __forceinline__ int64_t row_offset(int64_t row, int64_t heads, RowAddress a) {
  if (heads == 1) return row * a.stride;
  return (row / heads) * a.stride + (row % heads) * a.head_stride;
}

// Hides a packed vector's value from the optimiser, so that it re-widens the packed registers
// instead of keeping eight widened floats alive across a reduction (register pressure).
__device__ __forceinline__ void launder(uint4& v) {
  asm volatile("" : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w));
}

template <typename T>
__device__ __forceinline__ uint4 pack8(const float (&in)[8]) {
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = Elem<T>::from_float(in[i]);
  return raw;
}

// ---- row reductions over the tpr threads of a row group ----------------------------------------
// Two alternating shared buffers of R * 32 floats: a reduction writes one buffer, synchronises
// and reads it back; the next reduction uses the other buffer, and its barrier orders those
// reads before the buffer is written again two reductions later — one barrier per reduction.
template <int R>
struct RowScratch {
  float* base;  // 2 * R * 32 floats
  int phase;
  __device__ __forceinline__ float* take() {
    float* buffer = base + phase * (R * 32);
    phase ^= 1;
    return buffer;
  }
};

// Reduces R independent values (one per row in flight). The order of additions depends on tpr
// (a function of the hidden size) only. Every thread of the CTA must call it (it may
// synchronise the CTA).
template <int R>
__device__ __forceinline__ void row_sums(float (&v)[R], int tpr, RowScratch<R>& scratch) {
  const int width = tpr < 32 ? tpr : 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    if (offset < width) {
#pragma unroll
      for (int i = 0; i < R; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
    }
  }
  if (tpr <= 32) return;
  float* buffer = scratch.take();
  const int warp = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int i = 0; i < R; ++i) buffer[i * 32 + warp] = v[i];
  }
  __syncthreads();
  const int warps_per_row = tpr >> 5;
  const int first = (warp / warps_per_row) * warps_per_row;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    float s = 0.0f;
    for (int k = 0; k < warps_per_row; ++k) s += buffer[i * 32 + first + k];
    v[i] = s;
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

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// ---- grid-wide barrier (all CTAs co-resident: cooperative launch) ------------------------------
// counters[0] counts arrivals and is reset by the last arrival; counters[1] is a generation
// number. The counters are left ready for the next launch or CUDA-graph replay.
__device__ __forceinline__ void grid_barrier(unsigned int* counters) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned int* generation = counters + 1;
    const unsigned int seen = *generation;
    __threadfence();
    const unsigned int arrived = atomicAdd(counters, 1u);
    if (arrived == gridDim.x - 1) {
      atomicExch(counters, 0u);
      __threadfence();
      atomicAdd(counters + 1, 1u);
    } else {
      while (*generation == seen) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(64);
#endif
      }
    }
    __threadfence();
  }
  __syncthreads();
}

}  // namespace miles_rmsnorm
