// Session 51 (not run yet): rstd_fast (warp_rows_fast_rstd.patch, forward_fixed.cuh) against the
// IEEE expression 1.0f / sqrtf(v) on every float v of its range, bit for bit, on the GPU.
//   nvcc -std=c++17 -O3 -arch=sm_90a -I<patched package>/include rstd_check.cu -o rstd_check
#include <cstdio>

#include "miles_rmsnorm/forward_fixed.cuh"

__global__ void check(unsigned long long* bad, unsigned int* first) {
  const unsigned int lo = miles_rmsnorm::kRstdFastMinBits;
  const unsigned int n = miles_rmsnorm::kRstdFastEndBits - lo;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const float v = __uint_as_float(lo + i);
    if (!miles_rmsnorm::rstd_fast_range(v)) atomicAdd(bad, 1ull << 40);  // the test's own range
    const float ref = 1.0f / sqrtf(v);
    const float got = miles_rmsnorm::rstd_fast(v);
    if (__float_as_uint(ref) != __float_as_uint(got)) {
      atomicAdd(bad, 1ull);
      atomicMin(first, lo + i);
    }
  }
}

int main() {
  unsigned long long* bad;
  unsigned int* first;
  cudaMallocManaged(&bad, sizeof(*bad));
  cudaMallocManaged(&first, sizeof(*first));
  *bad = 0;
  *first = 0xffffffffu;
  check<<<132 * 16, 256>>>(bad, first);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  std::printf("rstd_fast: %llu of %u values differ (first bits 0x%08x); outside range: %llu\n",
              *bad & ((1ull << 40) - 1), miles_rmsnorm::kRstdFastEndBits -
              miles_rmsnorm::kRstdFastMinBits, *first, *bad >> 40);
  return *bad == 0 ? 0 : 1;
}
