// How fast does one SM stream a cold small call's column slice? C CTAs (one an SM), each reading
// NR tensors' R rows x S bytes (its column slice of a [R][C*S/2] BF16 tensor) and writing one,
// as the small-batch backward's CTAs do. Variants: per-thread 16-byte loads into registers (all
// in flight), per-thread cp.async into shared memory, bulk (TMA) copies into shared memory issued
// by one thread or by a warp's lanes, and bulk copies in and out. Cold: graph of 20 (flush;
// kernel) minus 20 flushes; warm: 200 kernels.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>
#include "miles_rmsnorm/cluster.cuh"
#include "miles_rmsnorm/device.cuh"  // cp_async16
using namespace miles_rmsnorm;

struct Args {
  const uint8_t* in[3];
  uint8_t* out;
  int64_t pitch;  // bytes of a row
  // Vector `idx` (KVEC vectors a row) of this CTA's column slice of input t, and of the output.
  template <int KVEC>
  __device__ const uint4* in_vector(int t, int idx) const {
    return reinterpret_cast<const uint4*>(in[t] + slice_offset<KVEC>(idx)) + idx % KVEC;
  }
  template <int KVEC>
  __device__ uint4* out_vector(int idx) const {
    return reinterpret_cast<uint4*>(out + slice_offset<KVEC>(idx)) + idx % KVEC;
  }
  template <int KVEC>
  __device__ int64_t slice_offset(int idx) const {
    return (idx / KVEC) * pitch + static_cast<int64_t>(blockIdx.x) * KVEC * 16;
  }
};

__device__ __forceinline__ uint4 combine(uint4 a, uint4 b) {
  return make_uint4(a.x ^ b.x, a.y + b.y, a.z ^ (b.z * 3u), a.w - b.w);
}

// Vector idx of the NR tensors staged in shared memory (R * KVEC vectors each), combined.
template <int NR, int R, int KVEC>
__device__ __forceinline__ uint4 combine_staged(const uint8_t* smem, int idx) {
  const uint4* v = reinterpret_cast<const uint4*>(smem);
  uint4 o = v[idx];
#pragma unroll
  for (int t = 1; t < NR; ++t) o = combine(o, v[t * R * KVEC + idx]);
  return o;
}

template <int NR, int R, int S, int THREADS>
__global__ void __launch_bounds__(THREADS, 1) ldg_kernel(Args a) {
  constexpr int kVec = S / 16;             // vectors of a row slice
  constexpr int kN = R * kVec / THREADS;   // vectors of a tensor a thread
  static_assert(kN * THREADS == R * kVec, "whole vectors");
  uint4 v[NR][kN];
#pragma unroll
  for (int t = 0; t < NR; ++t)
#pragma unroll
    for (int k = 0; k < kN; ++k) v[t][k] = __ldg(a.in_vector<kVec>(t, k * THREADS + threadIdx.x));
#pragma unroll
  for (int k = 0; k < kN; ++k) {
    uint4 o = v[0][k];
#pragma unroll
    for (int t = 1; t < NR; ++t) o = combine(o, v[t][k]);
    *a.out_vector<kVec>(k * THREADS + threadIdx.x) = o;
  }
}

template <int NR, int R, int S, int THREADS>
__global__ void __launch_bounds__(THREADS, 1) cpasync_kernel(Args a) {
  extern __shared__ __align__(128) uint8_t smem[];
  constexpr int kVec = S / 16;
  constexpr int kN = R * kVec / THREADS;
#pragma unroll
  for (int t = 0; t < NR; ++t)
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const int idx = k * THREADS + threadIdx.x;
      cp_async16(smem + (t * R * kVec + idx) * 16, a.in_vector<kVec>(t, idx));
    }
  asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n" ::: "memory");
  // each thread reads back only its own vectors: no barrier needed
#pragma unroll
  for (int k = 0; k < kN; ++k) {
    const int idx = k * THREADS + threadIdx.x;
    *a.out_vector<kVec>(idx) = combine_staged<NR, R, kVec>(smem, idx);
  }
}

__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// ISSUERS lanes issue the copies; OUT_BULK: the output goes out as bulk stores from shared memory.
template <int NR, int R, int S, int THREADS, int ISSUERS, bool OUT_BULK>
__global__ void __launch_bounds__(THREADS, 1) bulk_kernel(Args a) {
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t bar;
  constexpr int kVec = S / 16;
  constexpr int kN = R * kVec / THREADS;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * S;
  const uint32_t b = shared_address(&bar);
  if (threadIdx.x == 0) {
    barrier_init(b, 1);
    barrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) barrier_arrive_expect(b, NR * R * S);
  if (threadIdx.x < ISSUERS) {
    for (int c = threadIdx.x; c < NR * R; c += ISSUERS) {
      const int t = c / R, row = c % R;
      bulk_copy(shared_address(smem + c * S), a.in[t] + row * a.pitch + base, S, b);
    }
  }
  barrier_wait(b, 0);
#pragma unroll
  for (int k = 0; k < kN; ++k) {
    const int idx = k * THREADS + threadIdx.x;
    const uint4 o = combine_staged<NR, R, kVec>(smem, idx);
    if constexpr (OUT_BULK) {
      reinterpret_cast<uint4*>(smem)[idx] = o;
    } else {
      *a.out_vector<kVec>(idx) = o;
    }
  }
  if constexpr (OUT_BULK) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x < ISSUERS) {
      for (int row = threadIdx.x; row < R; row += ISSUERS) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                         a.out + row * a.pitch + base),
                     "r"(shared_address(smem + row * S)), "r"(S)
                     : "memory");
      }
      asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
  }
}

#include "../graph_timer.cuh"  // time_graph, g_flush

template <int C, int NR, int R, int S>
void shape(cudaStream_t s) {
  const int64_t pitch = static_cast<int64_t>(C) * S;
  const size_t bytes = static_cast<size_t>(R) * pitch;
  Args a{};
  std::vector<uint8_t> h(bytes);
  uint32_t seed = 777u + C + R + S;
  for (int t = 0; t < 3; ++t) {
    void* p; cudaMalloc(&p, bytes);
    for (auto& x : h) { seed = seed * 1664525u + 1013904223u; x = seed >> 24; }
    cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice);
    a.in[t] = static_cast<const uint8_t*>(p);
  }
  cudaMalloc(&a.out, bytes);
  a.pitch = pitch;
  std::vector<uint8_t> ref(bytes), got(bytes);
  const int smem = NR * R * S;
  const int cta_kb = (NR + 1) * R * S / 1024;
  bool have_ref = false;
  auto report = [&](const char* name, auto k, int threads, int dyn) {
    auto launch = [&](cudaStream_t st) { k<<<C, threads, dyn, st>>>(a); };
    if (dyn > 0) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn);
    cudaMemset(a.out, 0, bytes);
    launch(s);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(got.data(), a.out, bytes, cudaMemcpyDeviceToHost);
    if (!have_ref) { ref = got; have_ref = true; }
    const bool same = ref == got;
    printf("C %3d R %3d S %4d NR %d (%3d KB a CTA)  %-22s warm %6.3f cold %6.3f  %s %s\n", C, R, S,
           NR, cta_kb, name, time_graph(launch, s, false), time_graph(launch, s, true),
           same ? "same" : "DIFFERENT", cudaGetErrorString(e));
  };
  report("ldg 256", ldg_kernel<NR, R, S, 256>, 256, 0);
  report("ldg 512", ldg_kernel<NR, R, S, 512>, 512, 0);
  report("cp.async 256", cpasync_kernel<NR, R, S, 256>, 256, smem);
  report("cp.async 512", cpasync_kernel<NR, R, S, 512>, 512, smem);
  report("bulk 1 issuer", bulk_kernel<NR, R, S, 256, 1, false>, 256, smem);
  report("bulk 32 issuers", bulk_kernel<NR, R, S, 256, 32, false>, 256, smem);
  report("bulk 32 in+out", bulk_kernel<NR, R, S, 256, 32, true>, 256, smem);
  for (int t = 0; t < 3; ++t) cudaFree(const_cast<uint8_t*>(a.in[t]));
  cudaFree(a.out);
}

int main() {
  cudaStream_t s = probe_stream();
  shape<12, 3, 16, 1024>(s);   // residual 16 x 6144, one cluster
  shape<12, 2, 16, 1024>(s);   // plain 16 x 6144
  shape<16, 2, 64, 512>(s);    // 64 x 4096, one cluster
  shape<16, 2, 32, 1024>(s);   // 32 x 8192, one cluster
  shape<16, 2, 64, 1024>(s);   // 64 x 8192, one cluster
  shape<128, 2, 8, 1024>(s);   // 64 x 8192 over 8 clusters
  shape<64, 2, 16, 1024>(s);   // 64 x 8192 over 4 clusters
  shape<32, 2, 32, 1024>(s);   // 64 x 8192 over 2 clusters
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
