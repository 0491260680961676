// Forward latency bisection: forward_rows_kernel<bf16, bf16, 2, SMALL_BATCH=true, FORM=0> with
// switches, each kernel timed in CUDA graphs of 200 back-to-back launches (warm L2).
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "miles_rmsnorm/forward.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;
enum : int { NOHEAD = 1, FASTR = 2, NOSECOND = 4, PLAINLD = 8, EARLYHF = 16, LATEW = 32, I32 = 64,
             SMEMEARLY = 128, W16 = 256, TREE = 512, TREE16 = 1024, BARONLY = 2048, NOBFLY2 = 4096, BFLY2ONLY = 8192, BFLY2_16 = 16384 };
__device__ __forceinline__ float4 lds4(uint32_t a) { float4 v; asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory"); return v; }
// lane 0's value of the descending xor butterfly over N values (N a power of two).
template <int N>
__device__ __forceinline__ float tree(const float* x) {
  float a[N];
#pragma unroll
  for (int i = 0; i < N; ++i) a[i] = x[i];
#pragma unroll
  for (int k = N / 2; k >= 1; k >>= 1) {
#pragma unroll
    for (int i = 0; i < k; ++i) a[i] = a[i] + a[i + k];
  }
  return a[0];
}
__device__ __forceinline__ void sts(uint32_t a, float v) { asm volatile("st.shared.f32 [%0], %1;" :: "r"(a), "f"(v) : "memory"); }
__device__ __forceinline__ float lds(uint32_t a) { float v; asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory"); return v; }
__device__ __forceinline__ float bfly_width(float v, int width) {
  if (width > 16) v += __shfl_xor_sync(0xffffffffu, v, 16);
  if (width > 8) v += __shfl_xor_sync(0xffffffffu, v, 8);
  if (width > 4) v += __shfl_xor_sync(0xffffffffu, v, 4);
  if (width > 2) v += __shfl_xor_sync(0xffffffffu, v, 2);
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v;
}

template <int V>
__device__ __forceinline__ uint4 ld(const XT* p) {
  if constexpr ((V & PLAINLD) != 0) return *reinterpret_cast<const uint4*>(p);
  else return __ldg(reinterpret_cast<const uint4*>(p));
}

template <int V>
__global__ void __launch_bounds__(1024, 1) k(const ForwardParams p) {
  constexpr int VPT = 2;
  __shared__ __align__(16) float scratch_mem[2 * 32];
  const int tpr = p.tpr;
  const uint32_t sbase = static_cast<uint32_t>(__cvta_generic_to_shared(scratch_mem));
  float hf = 0.f;
  if constexpr ((V & EARLYHF) != 0) hf = static_cast<float>(static_cast<int>(p.hidden));
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<1> scratch = make_row_scratch<1>(scratch_mem, tpr, group);
  const int nv = static_cast<int>(p.hidden >> 3);
  const int row = static_cast<int>(blockIdx.x) * p.groups + group;
  const bool valid = row < static_cast<int>(p.rows);
  const bool per_head = (V & NOHEAD) ? false : p.heads != 1;
  uint4 h[VPT];
  const XT* xr = static_cast<const XT*>(p.x) + wide_row_offset(valid ? row : 0, per_head, p.heads, p.x_addr);
#pragma unroll
  for (int kk = 0; kk < VPT; ++kk) {
    const int j = lane + kk * tpr;
    h[kk] = valid && j < nv ? ld<V>(xr + j * 8) : make_uint4(0u, 0u, 0u, 0u);
  }
  RawWeight8<WT> w[VPT];
  if constexpr ((V & LATEW) == 0) {
    load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
#pragma unroll
    for (int kk = 0; kk < VPT; ++kk) w[kk].hold();
  }
  float ss[1] = {0.0f};
#pragma unroll
  for (int kk = 0; kk < VPT; ++kk) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float v = unpack<XT>(h[kk], e);
      ss[0] += v * v;
    }
  }
  if constexpr ((V & NOSECOND) != 0) {
    ss[0] = lane_sum_once(ss[0], 32);
  } else if constexpr ((V & BARONLY) != 0) {
    ss[0] = lane_sum_once(ss[0], 32);
    __syncthreads();
  } else if constexpr ((V & NOBFLY2) != 0) {
    float v = lane_sum_once(ss[0], 32);
    const int l = threadIdx.x & 31, wi = threadIdx.x >> 5;
    if (l == 0) sts(sbase + wi * 4, v);
    __syncthreads();
    ss[0] = lds(sbase);
  } else if constexpr ((V & BFLY2ONLY) != 0) {
    float v = lane_sum_once(ss[0], 32);
    ss[0] = lane_sum_once(v, 32);
  } else if constexpr ((V & BFLY2_16) != 0) {
    float v = lane_sum_once(ss[0], 32);
    const int l = threadIdx.x & 31, wi = threadIdx.x >> 5;
    if (l == 0) sts(sbase + wi * 4, v);
    __syncthreads();
    v = l < (tpr >> 5) ? lds(sbase + l * 4) : 0.0f;
    v += __shfl_xor_sync(0xffffffffu, v, 8);
    v += __shfl_xor_sync(0xffffffffu, v, 4);
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    ss[0] = v;
  } else if constexpr ((V & (TREE | TREE16)) != 0) {
    constexpr int N = (V & TREE16) ? 16 : 32;
    const int l = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int warps = tpr >> 5;
    if (threadIdx.x < N && static_cast<int>(threadIdx.x) >= warps) sts(sbase + threadIdx.x * 4, 0.0f);
    float v = lane_sum_once(ss[0], 32);
    if (l == 0) sts(sbase + wi * 4, v);
    __syncthreads();
    float x[N];
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
      const float4 f = lds4(sbase + q * 16);
      x[4 * q] = f.x; x[4 * q + 1] = f.y; x[4 * q + 2] = f.z; x[4 * q + 3] = f.w;
    }
    ss[0] = tree<N>(x);
  } else if constexpr ((V & (SMEMEARLY | W16)) != 0) {
    float v = lane_sum_once(ss[0], 32);
    const int l = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int warps = tpr >> 5;
    if constexpr ((V & SMEMEARLY) != 0) {
      if (l == 0) sts(sbase + wi * 4, v);
      __syncthreads();
      v = l < warps ? lds(sbase + l * 4) : 0.0f;
    } else {
      if (l == 0) scratch_mem[wi] = v;
      __syncthreads();
      v = l < warps ? scratch_mem[l] : 0.0f;
    }
    if constexpr ((V & W16) != 0) v = bfly_width(v, warp_partials_width(warps));
    else v = lane_sum_once(v, 32);
    ss[0] = v;
  } else {
    row_sums<1, true>(ss, tpr, scratch);
  }
  if constexpr ((V & LATEW) != 0) {
    load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
  }
  if (!valid) return;
#pragma unroll
  for (int kk = 0; kk < VPT; ++kk) launder(h[kk]);
  float r;
  if constexpr ((V & FASTR) != 0) {
    r = rsqrtf(ss[0] * (1.0f / static_cast<float>(p.hidden)) + p.eps);
  } else if constexpr ((V & EARLYHF) != 0) {
    r = row_rstd(ss[0], hf, p.eps);
  } else {
    r = row_rstd(ss[0], static_cast<float>(p.hidden), p.eps);
  }
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * p.hidden;
  store_row<XT, WT, VPT, false, false>(yr, h, w, r, nv, lane, tpr);
  if (lane == 0) p.rstd[row] = r;
}

__global__ void empty_kernel(const ForwardParams p) {}

template <typename K>
float time_graph(K kernel, dim3 grid, dim3 block, const ForwardParams& p, cudaStream_t s) {
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < 200; ++i) kernel<<<grid, block, 0, s>>>(p);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaGraphLaunch(ge, s); cudaStreamSynchronize(s);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> v;
  for (int rep = 0; rep < 15; ++rep) {
    cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000.f / 200.f);
  }
  std::sort(v.begin(), v.end());
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  return v[v.size() / 2];
}

#include <algorithm>
int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  for (int H : {2048, 8192}) {
    for (int T : {1, 128}) {
      ForwardParams p{};
      void *x, *w, *y; float* r;
      cudaMalloc(&x, (size_t)T * H * 2); cudaMalloc(&w, H * 2); cudaMalloc(&y, (size_t)T * H * 2); cudaMalloc(&r, T * 4);
      cudaMemset(x, 0x3c, (size_t)T * H * 2); cudaMemset(w, 0x3c, H * 2);
      const int nv = H / 8; int tpr = (nv + 1) / 2; tpr = (tpr + 31) / 32 * 32;
      p.x = x; p.w = w; p.y = y; p.rstd = r; p.rows = T; p.hidden = H; p.heads = 1;
      p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.flags = 0; p.tpr = tpr; p.groups = 1;
      p.group_magic = (unsigned)(((1ull << 32) + tpr - 1) / tpr);
      dim3 grid(T), block(tpr);
      printf("H=%d T=%d empty %.3f\n", H, T, time_graph(empty_kernel, grid, block, p, s));
#define RUN(V) printf("H=%d T=%d V=%-3d %.3f\n", H, T, V, time_graph(k<V>, grid, block, p, s));
      RUN(0) RUN(NOSECOND) RUN(SMEMEARLY) RUN(BARONLY) RUN(NOBFLY2) RUN(BFLY2ONLY) RUN(BFLY2_16)
      RUN(BFLY2_16 | LATEW) RUN(NOSECOND | LATEW) RUN(0) RUN(NOSECOND) RUN(SMEMEARLY) RUN(BARONLY)
      cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(r);
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
