// Session 70 probe: do two branch-free sequences give 1.0f / sqrtf(v)'s bits (IEEE, as the
// package computes rstd) on every float v whose bits lie in [0x0d000000, 0x7f000000), rstd_fast's
// range (forward.cuh)? Built with nvcc -arch=sm_90a -O3 (IEEE division and square root).
//   two_mufu:  rstd_fast as of step 103: ptxas's own fast paths of sqrt.rn and then rcp.rn
//              (rsqrt.approx, two FMAs for the root; rcp.approx of the root, two FMAs)
//   one_mufu:  the root as above, then its reciprocal from rsqrt.approx's y (about 1 / root
//              already) by the same Newton step: t = y * q - 1, r = y - y * t; no rcp.approx
// Prints, per sequence, the values checked, how many differ, and the first that differs; then
// (call 2) where one_mufu differs: each distinct (mantissa, exponent's parity) of those floats
// with its count (the sequences scale exactly with v's exponent two binades at a time).
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr unsigned int kLo = 0x0d000000u;
constexpr unsigned int kEnd = 0x7f000000u;

__device__ __forceinline__ float root(float v, float* y_out) {
  float y, s, h, e, q;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
  asm("mul.ftz.f32 %0, %1, %2;" : "=f"(s) : "f"(v), "f"(y));
  asm("mul.ftz.f32 %0, %1, 0f3F000000;" : "=f"(h) : "f"(y));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(e) : "f"(-s), "f"(s), "f"(v));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(q) : "f"(e), "f"(h), "f"(s));
  *y_out = y;
  return q;
}

__device__ __forceinline__ float two_mufu(float v) {
  float y, r, t, nt;
  const float q = root(v, &y);
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(q));
  asm("fma.rn.f32 %0, %1, %2, 0fBF800000;" : "=f"(t) : "f"(r), "f"(q));
  asm("neg.ftz.f32 %0, %1;" : "=f"(nt) : "f"(t));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(r), "f"(nt), "f"(r));
  return r;
}

__device__ __forceinline__ float one_mufu(float v) {
  float y, t, r;
  const float q = root(v, &y);
  asm("fma.rn.f32 %0, %1, %2, 0fBF800000;" : "=f"(t) : "f"(y), "f"(q));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(y), "f"(-t), "f"(y));
  return r;
}

constexpr int kKept = 4096;

__global__ void check(unsigned long long* bad, unsigned int* first, unsigned int* kept) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < kEnd - kLo;
       i += gridDim.x * blockDim.x) {
    const float v = __uint_as_float(kLo + i);
    const unsigned int want = __float_as_uint(1.0f / sqrtf(v));
    if (__float_as_uint(two_mufu(v)) != want) {
      atomicAdd(&bad[0], 1ull);
      atomicMin(&first[0], kLo + i);
    }
    if (__float_as_uint(one_mufu(v)) != want) {
      const unsigned long long k = atomicAdd(&bad[1], 1ull);
      if (k < kKept) kept[k] = kLo + i;
      atomicMin(&first[1], kLo + i);
    }
  }
}

}  // namespace

int main() {
  unsigned long long* bad;
  unsigned int *first, *kept;
  cudaMallocManaged(&bad, 2 * sizeof(*bad));
  cudaMallocManaged(&kept, kKept * sizeof(*kept));
  cudaMallocManaged(&first, 2 * sizeof(*first));
  for (int k = 0; k < 2; ++k) {
    bad[k] = 0;
    first[k] = 0xffffffffu;
  }
  check<<<4096, 256>>>(bad, first, kept);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  const char* names[] = {"two_mufu", "one_mufu"};
  for (int k = 0; k < 2; ++k) {
    std::printf("%s values %u differ %llu first 0x%08x\n", names[k], kEnd - kLo, bad[k],
                first[k]);
  }
  // one_mufu's differing floats by (mantissa, exponent parity): a small table, counted by a scan
  unsigned int keys[64];
  unsigned long long counts[64];
  int distinct = 0;
  const unsigned long long n = bad[1] < kKept ? bad[1] : kKept;
  for (unsigned long long j = 0; j < n; ++j) {
    const unsigned int key = (kept[j] & 0x7fffffu) | ((kept[j] >> 23 & 1u) << 23);
    int at = 0;
    while (at < distinct && keys[at] != key) ++at;
    if (at == distinct) {
      if (distinct == 64) {
        std::printf("more than 64 distinct patterns\n");
        return 0;
      }
      keys[distinct] = key;
      counts[distinct++] = 0;
    }
    ++counts[at];
  }
  for (int at = 0; at < distinct; ++at) {
    std::printf("one_mufu differs: mantissa 0x%06x exponent %s: %llu floats\n",
                keys[at] & 0x7fffffu, keys[at] >> 23 ? "odd" : "even", counts[at]);
  }
  return 0;
}
