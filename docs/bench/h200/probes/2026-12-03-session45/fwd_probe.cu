// Session 45: where the residual forward's small batch (64 x 6144, BF16) spends its time, and two
// ways to shorten it. Times the package's forward_fixed_kernel (residual form) against copies of
// it in this file (same loads, same additions in the same order, so the same bits: checked):
//   mine<TPR, SPLIT, PF>
//   SPLIT 0: one CTA a row (the package's kernel); 1: two CTAs a row, each with half the row's
//     warps, the warp partials exchanged through global memory (a slot a warp, reset to a
//     sentinel by its reader); 2: the same with two CTAs of a cluster exchanging through
//     distributed shared memory; 3: two CTAs a row without any exchange (wrong rstd, a floor).
//   PF 1: thread 0 prefetches (prefetch.global.L2) the first line of the row's y and h_new at
//     entry, so that their address translations are warm by the time the stores go out.
// Cold (a 256 MB memset before each launch, in a CUDA graph, the memsets' own graph subtracted:
// graph_timer.cuh) and warm, us a launch. With -DSTAMPS thread 0 of each CTA records
// %globaltimer at entry (0), h_new stored (1), row sum (2), y stored (3), after a fence (4: its
// stores complete) and its SM (5); printed as medians over 30 cold launches.
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "miles_rmsnorm/cluster.cuh"
#include "miles_rmsnorm/forward_fixed.cuh"
#include "miles_rmsnorm/launch.h"
#include "graph_timer.cuh"
#include "probe_inputs.cuh"

using namespace miles_rmsnorm;
using bf16 = __nv_bfloat16;

#ifdef STAMPS
__device__ unsigned long long g_stamps[1024 * 8];
__device__ __forceinline__ unsigned long long gtime_after(uint32_t v) {
  unsigned long long t;
  asm volatile("{.reg .u32 q; mov.u32 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "r"(v)
               : "memory");
  return t;
}
#define STAMP(k, v) \
  if (threadIdx.x == 0) g_stamps[blockIdx.x * 8 + (k)] = gtime_after(v)
#else
#define STAMP(k, v)
#endif

constexpr uint32_t kSentinel = 0xffffffffu;  // a NaN no addition produces (canonical is 0x7fffffff)

__device__ __forceinline__ void store_relaxed(float* p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t load_relaxed(const float* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}
__device__ __forceinline__ void store_cluster_f32(uint32_t addr, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}

template <int TPR, int SPLIT, int PF>
__global__ void __launch_bounds__(1024, 1) mine(const ForwardParams p, float* xchg) {
  constexpr int VPT = 2;
  constexpr int kWarps = TPR / 32;
  constexpr int kWidth = warp_partials_width(kWarps);
  constexpr int kHidden = 8 * VPT * TPR;
  constexpr int kBlock = SPLIT ? TPR / 2 : TPR;
  constexpr int kLocal = kBlock / 32;
  __shared__ __align__(16) float partials[32];
#ifdef STAMPS
  if (threadIdx.x == 0) {
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    g_stamps[blockIdx.x * 8 + 5] = id + 1ull;
  }
  STAMP(0, 0u);
#endif
  const int row = SPLIT ? static_cast<int>(blockIdx.x >> 1) : static_cast<int>(blockIdx.x);
  const int half = SPLIT ? static_cast<int>(blockIdx.x & 1) : 0;
  const int lane = half * kBlock + static_cast<int>(threadIdx.x);
  if (SPLIT == 2) cluster_arrive_relaxed();
  bf16* yr = static_cast<bf16*>(p.y) + static_cast<int64_t>(row) * kHidden;
  bf16* hr = static_cast<bf16*>(p.h_new) + static_cast<int64_t>(row) * kHidden;
  if (PF & 1) {
    if (threadIdx.x == 0) {
      prefetch_l2(yr + half * kBlock * 8);
      prefetch_l2(hr + half * kBlock * 8);
    }
  }
  const bf16* wp = static_cast<const bf16*>(p.w);
  RawWeight8<bf16> w[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
  const bf16* xr = static_cast<const bf16*>(p.x) + static_cast<int64_t>(row) * kHidden;
  const bf16* ur = static_cast<const bf16*>(p.u) + static_cast<int64_t>(row) * kHidden;
  uint4 h[VPT], u[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    h[k] = load_raw<bf16>(xr + (lane + k * TPR) * 8);
    u[k] = load_raw<bf16>(ur + (lane + k * TPR) * 8);
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    h[k] = residual_sum<bf16>(h[k], u[k]);
    store_vector(hr + (lane + k * TPR) * 8, h[k]);
  }
  STAMP(1, h[VPT - 1].w);
  float v = lane_sum_once(sum_of_squares<bf16, VPT>(h), 32);
  const int lw = static_cast<int>(threadIdx.x) & 31;
  const int gw = lane >> 5;
  if (SPLIT == 2) cluster_wait();  // the peer has started: its shared memory may be written
  if (lw == 0) {
    partials[gw] = v;
    if (SPLIT == 1) store_relaxed(xchg + (row * 2 + half) * 16 + (gw - half * kLocal),
                                  __float_as_uint(v));
    if (SPLIT == 2) store_cluster_f32(cluster_address(shared_address(&partials[gw]), half ^ 1), v);
  }
  if (SPLIT == 1 && threadIdx.x < kLocal) {
    float* slot = xchg + (row * 2 + (half ^ 1)) * 16 + threadIdx.x;
    uint32_t got;
    do { got = load_relaxed(slot); } while (got == kSentinel);
    partials[(half ^ 1) * kLocal + threadIdx.x] = __uint_as_float(got);
    store_relaxed(slot, kSentinel);
  }
  if (SPLIT == 3 && threadIdx.x < kLocal) partials[(half ^ 1) * kLocal + threadIdx.x] = 0.0f;
  if (SPLIT == 2) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  const int slot = lw & (kWidth - 1);
  v = slot < kWarps ? partials[slot] : 0.0f;
  const float s = lane_sum_once(v, kWidth);
  STAMP(2, __float_as_uint(s));
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(s, static_cast<float>(kHidden), p.eps);
  store_row<bf16, bf16, VPT, false, false>(yr, h, w, r, VPT * TPR, lane, TPR);
  if (lane == 0) p.rstd[row] = r;
  STAMP(3, __float_as_uint(r));
#ifdef STAMPS
  __threadfence();
  STAMP(4, 0u);
#endif
}

struct Buffers {
  ForwardParams p{};
  float* xchg = nullptr;
};

static Buffers make(int rows, int hidden) {
  Buffers b;
  const size_t bytes = static_cast<size_t>(rows) * hidden * 2;
  b.p.x = dev_random(bytes, 11u + hidden, false);
  b.p.u = dev_random(bytes, 23u + rows, false);
  b.p.w = dev_random(hidden * 2, 5u, true);
  cudaMalloc(&b.p.y, bytes);
  cudaMalloc(&b.p.h_new, bytes);
  cudaMalloc(&b.p.rstd, rows * 4);
  b.p.rows = rows; b.p.hidden = hidden; b.p.heads = 1;
  b.p.x_addr = {hidden, 0}; b.p.u_addr = {hidden, 0};
  b.p.eps = 1e-6f; b.p.flags = kResidual; b.p.tpr = hidden / 16; b.p.groups = 1;
  b.p.group_magic = 0;
  cudaMalloc(&b.xchg, rows * 2 * 16 * 4);
  cudaMemset(b.xchg, 0xff, rows * 2 * 16 * 4);
  return b;
}

struct Outputs {
  std::vector<uint16_t> y, h;
  std::vector<float> r;
};

static Outputs read(const Buffers& b) {
  const size_t n = static_cast<size_t>(b.p.rows) * b.p.hidden;
  Outputs o{std::vector<uint16_t>(n), std::vector<uint16_t>(n), std::vector<float>(b.p.rows)};
  cudaMemcpy(o.y.data(), b.p.y, n * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(o.h.data(), b.p.h_new, n * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(o.r.data(), b.p.rstd, b.p.rows * 4, cudaMemcpyDeviceToHost);
  return o;
}

static void poison(const Buffers& b) {
  const size_t n = static_cast<size_t>(b.p.rows) * b.p.hidden;
  cudaMemset(b.p.y, 0x7f, n * 2); cudaMemset(b.p.h_new, 0x7f, n * 2);
  cudaMemset(b.p.rstd, 0x7f, b.p.rows * 4);
}

static bool same(const Outputs& a, const Outputs& b) {
  return a.y == b.y && a.h == b.h && std::memcmp(a.r.data(), b.r.data(), a.r.size() * 4) == 0;
}

template <typename K>
static void launch(K kernel, const Buffers& b, unsigned grid, unsigned block, int cluster,
                   cudaStream_t s) {
  OneDimLaunch l(grid, block, 0, s);
  if (cluster > 1) l.cluster(cluster);
  cudaLaunchKernelEx(&l.config, kernel, b.p, b.xchg);
}

#ifdef STAMPS
static void stamps(const char* name, void (*kernel)(ForwardParams, float*), const Buffers& b,
                   unsigned grid, unsigned block, int cluster, cudaStream_t s) {
  std::vector<std::vector<double>> med(5), last(5);
  std::vector<unsigned long long> st(grid * 8);
  std::vector<double> sms;
  for (int rep = 0; rep < 33; ++rep) {
    cudaMemsetAsync(g_flush, rep & 0xff, g_flush_bytes, s);
    launch(kernel, b, grid, block, cluster, s);
    cudaStreamSynchronize(s);
    cudaMemcpyFromSymbol(st.data(), g_stamps, grid * 8 * 8);
    if (rep < 3) continue;
    unsigned long long t0 = ~0ull;
    std::vector<int> per_sm(200, 0);
    for (unsigned c = 0; c < grid; ++c) { t0 = std::min(t0, st[c * 8]); ++per_sm[st[c * 8 + 5]]; }
    sms.push_back(*std::max_element(per_sm.begin(), per_sm.end()));
    for (int k = 0; k < 5; ++k) {
      std::vector<double> v;
      for (unsigned c = 0; c < grid; ++c) v.push_back((st[c * 8 + k] - t0) / 1000.0);
      std::sort(v.begin(), v.end());
      med[k].push_back(v[v.size() / 2]);
      last[k].push_back(v.back());
    }
  }
  auto m = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  printf("stamps %-22s", name);
  const char* names[5] = {"entry", "h_new", "sum", "y", "fenced"};
  for (int k = 0; k < 5; ++k) printf(" %s %.2f/%.2f", names[k], m(med[k]), m(last[k]));
  printf("  (most CTAs on one SM: %.0f)\n", m(sms));
}
#endif

template <int TPR>
static void shape(int rows, cudaStream_t s) {
  const int hidden = 16 * TPR;
  Buffers b = make(rows, hidden);
  poison(b);
  auto pkg = forward_fixed_kernel<bf16, bf16, 2, TPR, kResidual, true>;
  {
    OneDimLaunch l(rows, TPR, 0, s);
    cudaLaunchKernelEx(&l.config, pkg, b.p);
  }
  cudaStreamSynchronize(s);
  const Outputs ref = read(b);
  struct V { const char* name; void (*k)(ForwardParams, float*); unsigned grid, block; int cl; };
  const V vs[] = {
      {"one CTA (copy)", mine<TPR, 0, 0>, (unsigned)rows, TPR, 1},
      {"one CTA + prefetch", mine<TPR, 0, 1>, (unsigned)rows, TPR, 1},
      {"two, global xchg", mine<TPR, 1, 0>, 2u * rows, TPR / 2, 1},
      {"two, global + pf", mine<TPR, 1, 1>, 2u * rows, TPR / 2, 1},
      {"two, cluster", mine<TPR, 2, 0>, 2u * rows, TPR / 2, 2},
      {"two, no xchg (floor)", mine<TPR, 3, 0>, 2u * rows, TPR / 2, 1},
  };
  auto pkg_launch = [&](cudaStream_t st) {
    OneDimLaunch l(rows, TPR, 0, st);
    cudaLaunchKernelEx(&l.config, pkg, b.p);
  };
  const float pc = time_graph(pkg_launch, s, true), pw = time_graph(pkg_launch, s, false);
  printf("%3d x %5d  %-22s cold %5.2f  warm %5.2f\n", rows, hidden, "package", pc, pw);
  for (const V& v : vs) {
    poison(b);
    launch(v.k, b, v.grid, v.block, v.cl, s);
    if (cudaStreamSynchronize(s) != cudaSuccess) { printf("%s: launch failed\n", v.name); exit(1); }
    const bool ok = same(read(b), ref);
    auto f = [&](cudaStream_t st) { launch(v.k, b, v.grid, v.block, v.cl, st); };
    const float c = time_graph(f, s, true), w = time_graph(f, s, false);
    printf("%3d x %5d  %-22s cold %5.2f  warm %5.2f  bits %s\n", rows, hidden, v.name, c, w,
           ok ? "same" : "DIFFER");
  }
#ifdef STAMPS
  for (const V& v : vs) stamps(v.name, v.k, b, v.grid, v.block, v.cl, s);
#endif
}

int main() {
  cudaStream_t s = probe_stream();
  for (int pass = 0; pass < 2; ++pass) {
    shape<384>(64, s);
    shape<256>(64, s);
    shape<512>(64, s);
    shape<384>(48, s);
  }
  return 0;
}
