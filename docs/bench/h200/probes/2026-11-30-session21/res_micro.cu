// Where does a small residual forward's time go (16/64 rows x 4096/6144)? The package's
// forward_rows_kernel (SMALL_BATCH, residual form) against fixed-width residual kernels with the
// same arithmetic. Warm: graph of 200 launches; cold: graph of 20 (flush; kernel) minus 20 flushes.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "miles_rmsnorm/forward_fixed.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;

// MODE: 1 coherent x/u loads, 2 h_new stored after the row sum, 4 approximate rsqrt (diagnostic),
// 8 no h_new store (diagnostic), 16 weights loaded after the add (Liger's order)
template <int TPR, int VPT, int MODE>
__global__ void __launch_bounds__(1024, 1) resfix(const ForwardParams p) {
  constexpr int kNv = VPT * TPR;
  constexpr int kHidden = 8 * kNv;
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x);
  const XT* xr = static_cast<const XT*>(p.x) + static_cast<int64_t>(row) * kHidden;
  const XT* ur = static_cast<const XT*>(p.u) + static_cast<int64_t>(row) * kHidden;
  uint4 h[VPT], u[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    h[k] = (MODE & 1) ? load_coherent16(xr + (lane + k * TPR) * 8) : load_raw<XT>(xr + (lane + k * TPR) * 8);
    u[k] = (MODE & 1) ? load_coherent16(ur + (lane + k * TPR) * 8) : load_raw<XT>(ur + (lane + k * TPR) * 8);
  }
  const WT* wp = static_cast<const WT*>(p.w);
  RawWeight8<WT> w[VPT];
  if constexpr ((MODE & 16) == 0) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].hold();
  }
  XT* hr = static_cast<XT*>(p.h_new) + static_cast<int64_t>(row) * kHidden;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    float sum[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) sum[e] = unpack<XT>(h[k], e) + unpack<XT>(u[k], e);
    h[k] = pack8<XT>(sum);
    if constexpr ((MODE & 10) == 0) store_vector(hr + (lane + k * TPR) * 8, h[k]);
  }
  if constexpr ((MODE & 16) != 0) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
  }
  const float ss = fixed_row_sum<TPR>(sum_of_squares<XT, VPT>(h), partials);
  if constexpr ((MODE & 2) != 0) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) store_vector(hr + (lane + k * TPR) * 8, h[k]);
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = (MODE & 4) ? rsqrtf(ss / static_cast<float>(kHidden) + p.eps)
                             : row_rstd(ss, static_cast<float>(kHidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * kHidden;
  store_row<XT, WT, VPT, false, false>(yr, h, w, r, kNv, lane, TPR);
  if (lane == 0) p.rstd[row] = r;
}

#include "../graph_timer.cuh"  // time_graph, g_flush (shared since session 22)

struct Bufs { void *x, *u, *w, *y, *hn; float* r; };

template <int TPR, int VPT>
void shape(cudaStream_t s, int T) {
  constexpr int H = 8 * VPT * TPR;
  Bufs b;
  cudaMalloc(&b.x, (size_t)T * H * 2); cudaMalloc(&b.u, (size_t)T * H * 2); cudaMalloc(&b.w, H * 2);
  cudaMalloc(&b.y, (size_t)T * H * 2); cudaMalloc(&b.hn, (size_t)T * H * 2); cudaMalloc(&b.r, T * 4);
  std::vector<uint16_t> hx((size_t)T * H), hu((size_t)T * H), hw(H);
  uint32_t seed = 12345u + T + H;
  auto rnd = [&]() { seed = seed * 1664525u + 1013904223u; return seed; };
  auto bf = [&](float f) { uint32_t u; std::memcpy(&u, &f, 4); return (uint16_t)(u >> 16); };
  for (auto& v : hx) v = bf(((rnd() >> 8) / 16777216.f - 0.5f) * 4.f);
  for (auto& v : hu) v = bf(((rnd() >> 8) / 16777216.f - 0.5f) * 4.f);
  for (auto& v : hw) v = bf(0.5f + (rnd() >> 8) / 16777216.f);
  cudaMemcpy(b.x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b.u, hu.data(), hu.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b.w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice);
  ForwardParams p{};
  p.x = b.x; p.u = b.u; p.w = b.w; p.y = b.y; p.h_new = b.hn; p.rstd = b.r; p.rows = T; p.hidden = H;
  p.heads = 1; p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.flags = kResidual;
  p.tpr = TPR; p.groups = 1; p.group_magic = division_magic(TPR);
  auto pkg = [&](cudaStream_t st) { forward_rows_kernel<XT, WT, VPT, true, kResidual><<<T, TPR, 0, st>>>(p); };
  // reference bits
  std::vector<uint16_t> ry((size_t)T * H), rh((size_t)T * H), oy((size_t)T * H), oh((size_t)T * H);
  std::vector<float> rr(T), orr(T);
  auto fetch = [&](std::vector<uint16_t>& y, std::vector<uint16_t>& hn, std::vector<float>& r) {
    cudaDeviceSynchronize();
    cudaMemcpy(y.data(), b.y, y.size() * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(hn.data(), b.hn, hn.size() * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(r.data(), b.r, r.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemset(b.y, 0xff, (size_t)T * H * 2); cudaMemset(b.hn, 0xff, (size_t)T * H * 2); cudaMemset(b.r, 0xff, T * 4);
  };
  pkg(s); fetch(ry, rh, rr);
  auto check = [&](const char* name) {
    fetch(oy, oh, orr);
    long bad = 0;
    for (size_t i = 0; i < ry.size(); ++i) bad += (ry[i] != oy[i]) + (rh[i] != oh[i]);
    for (int i = 0; i < T; ++i) bad += std::memcmp(&rr[i], &orr[i], 4) != 0;
    return bad;
  };
  printf("%4d x %5d  %-28s warm %6.3f cold %6.3f\n", T, H, "package forward_rows_kernel",
         time_graph(pkg, s, false), time_graph(pkg, s, true));
#define V(M, NAME)                                                                              \
  {                                                                                             \
    auto k = [&](cudaStream_t st) { resfix<TPR, VPT, M><<<T, TPR, 0, st>>>(p); };               \
    k(s); long bad = check(NAME);                                                               \
    printf("%4d x %5d  %-28s warm %6.3f cold %6.3f  bits differing %ld\n", T, H, NAME,          \
           time_graph(k, s, false), time_graph(k, s, true), bad);                                \
  }
  V(0, "fixed")
  V(1, "fixed coherent x/u")
  V(2, "fixed h_new after sum")
  V(16, "fixed weights after add")
  V(4, "fixed approx rsqrt (diag)")
  V(8, "fixed no h_new (diag)")
  cudaFree(b.x); cudaFree(b.u); cudaFree(b.w); cudaFree(b.y); cudaFree(b.hn); cudaFree(b.r);
}

int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  cudaMalloc(&g_flush, g_flush_bytes);
  for (int pass = 0; pass < 2; ++pass) {
    for (int T : {16, 64}) {
      shape<256, 2>(s, T);
      shape<384, 2>(s, T);
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
