// Is a small forward's cold-L2 penalty the kernel-parameter (constant bank) loads, fetched one
// after another behind the per-head branch? The package's fixed kernel (V0) against copies whose
// parameter loads do not wait on a branch. Graphs of 100 launches; cold: a 512 MB memset before
// each launch (minus the memsets alone); data: memset, then a kernel reading x and w; median of 9.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "miles_rmsnorm/forward_fixed.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;

// The first 64 bytes of the parameters hold what the row's address needs.
struct FrontParams {
  const void* x;
  int64_t heads;
  RowAddress x_addr;
  const void* w;
  void* y;
  float* rstd;
  int64_t rows;
  float eps;
};

// PER_HEAD: the per-head path kept; PRED: the row loads predicated on the row's validity (the
// package's), else unpredicated (the fixed kernel's grid has no invalid row).
template <int VPT, int TPR, bool PER_HEAD, bool PRED, typename P>
__global__ void __launch_bounds__(1024, 1) fixed_variant(const P p) {
  constexpr int kNv = VPT * TPR;
  constexpr int kHidden = 8 * kNv;
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x);
  const bool valid = row < static_cast<int>(p.rows);
  const bool per_head = PER_HEAD && p.heads != 1;
  uint4 h[VPT];
  load_row_vectors<XT, VPT>(static_cast<const XT*>(p.x) +
                                wide_row_offset(valid ? row : 0, per_head, p.heads, p.x_addr),
                            PRED ? valid : true, kNv, lane, TPR, h);
  const WT* wp = static_cast<const WT*>(p.w);
  RawWeight8<WT> w[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  const float ss = fixed_row_sum<TPR>(sum_of_squares<XT, VPT>(h), partials);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss, static_cast<float>(kHidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * kHidden;
  store_row<XT, WT, VPT, false, false>(yr, h, w, r, kNv, lane, TPR);
  if (lane == 0) p.rstd[row] = r;
}

// V3: plain arguments, V1's body.
template <int VPT, int TPR>
__global__ void __launch_bounds__(1024, 1) fixed_args(const XT* __restrict__ x, const WT* w,
                                                      XT* y, float* rstd, int rows, float eps) {
  constexpr int kNv = VPT * TPR;
  constexpr int kHidden = 8 * kNv;
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x);
  const bool valid = row < rows;
  uint4 h[VPT];
  load_row_vectors<XT, VPT>(x + static_cast<int64_t>(valid ? row : 0) * kHidden, valid, kNv, lane, TPR, h);
  RawWeight8<WT> wv[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) wv[k].load_coherent(w + (lane + k * TPR) * 8);
#pragma unroll
  for (int k = 0; k < VPT; ++k) wv[k].hold();
  const float ss = fixed_row_sum<TPR>(sum_of_squares<XT, VPT>(h), partials);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss, static_cast<float>(kHidden), eps);
  store_row<XT, WT, VPT, false, false>(y + static_cast<int64_t>(row) * kHidden, h, wv, r, kNv, lane, TPR);
  if (lane == 0) rstd[row] = r;
}

__global__ void touch(const uint4* a, size_t na, const uint4* b, size_t nb, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < na; i += gridDim.x * blockDim.x) acc.x ^= a[i].x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nb; i += gridDim.x * blockDim.x) acc.y ^= b[i].y;
  if (acc.x == 0x12345678u && acc.y == 0x9abcdefu) sink[0] = acc;
}

void* flush_buf; const size_t kFlush = 512ull << 20;
uint4* sink;

// mode 0 warm, 1 cold (memset), 2 memset + touch of x and w
template <typename F, typename P>
float time_graph(F launch, P pre, int mode, cudaStream_t s) {
  auto build = [&](bool with_kernel) {
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < 100; ++i) {
      if (mode >= 1) cudaMemsetAsync(flush_buf, i & 0xff, kFlush, s);
      if (mode == 2) pre(s);
      if (with_kernel) launch(s);
    }
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    cudaGraphDestroy(g);
    return ge;
  };
  auto t = [&](cudaGraphExec_t ge) {
    cudaGraphLaunch(ge, s); cudaStreamSynchronize(s);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> v;
    for (int rep = 0; rep < 9; ++rep) {
      cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000.f / 100.f);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  cudaGraphExec_t with = build(true);
  float tw = t(with);
  cudaGraphExecDestroy(with);
  if (mode == 0) return tw;
  cudaGraphExec_t without = build(false);
  float to = t(without);
  cudaGraphExecDestroy(without);
  return tw - to;
}

template <int VPT, int TPR>
void run_shape(int T, cudaStream_t s) {
  const int H = 8 * VPT * TPR;
  void *x, *w, *y; float* r;
  cudaMalloc(&x, (size_t)T * H * 2); cudaMalloc(&w, H * 2); cudaMalloc(&y, (size_t)T * H * 2); cudaMalloc(&r, T * 4);
  cudaMemset(x, 0x3c, (size_t)T * H * 2); cudaMemset(w, 0x3c, H * 2);
  ForwardParams p{};
  p.x = x; p.w = w; p.y = y; p.rstd = r; p.rows = T; p.hidden = H; p.heads = 1;
  p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.tpr = TPR; p.groups = 1;
  p.group_magic = (unsigned)(((1ull << 32) + TPR - 1) / TPR);
  auto pre = [&](cudaStream_t st) { touch<<<132, 256, 0, st>>>((const uint4*)x, (size_t)T * H / 8, (const uint4*)w, H / 8, sink); };
  FrontParams f{x, 1, {H, 0}, w, y, r, T, 1e-6f};
  const char* names[] = {"V0 package", "V1 no per-head", "V2 unpredicated", "V3 plain args",
                         "V4 neither", "V5 front params"};
  for (int v = 0; v < 6; ++v) {
    float m[3];
    for (int mode = 0; mode < 3; ++mode) {
      auto launch = [&](cudaStream_t st) {
        if (v == 0) forward_fixed_kernel<XT, WT, VPT, TPR, 0><<<T, TPR, 0, st>>>(p);
        if (v == 1) fixed_variant<VPT, TPR, false, true><<<T, TPR, 0, st>>>(p);
        if (v == 2) fixed_variant<VPT, TPR, true, false><<<T, TPR, 0, st>>>(p);
        if (v == 4) fixed_variant<VPT, TPR, false, false><<<T, TPR, 0, st>>>(p);
        if (v == 5) fixed_variant<VPT, TPR, true, false><<<T, TPR, 0, st>>>(f);
        if (v == 3) fixed_args<VPT, TPR><<<T, TPR, 0, st>>>((const XT*)x, (const WT*)w, (XT*)y, r, T, 1e-6f);
      };
      m[mode] = time_graph(launch, pre, mode, s);
    }
    printf("%5d x %-5d %-16s warm %5.2f  cold %5.2f  cold-data-warm %5.2f\n", T, H, names[v], m[0], m[1], m[2]);
  }
  cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(r);
}

int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  cudaMalloc(&flush_buf, kFlush); cudaMalloc(&sink, 64);
  for (int pass = 0; pass < 2; ++pass) {
    for (int T : {1, 128}) {
      run_shape<2, 128>(T, s);   // H 2048
      run_shape<2, 256>(T, s);   // H 4096
    }
    run_shape<2, 256>(256, s);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
