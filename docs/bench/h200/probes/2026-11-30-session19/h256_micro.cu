// Where does a 1 x 256 forward's time go? The package's real H = 256 instance (VPT 1, tpr 32)
// against stripped variants. Warm L2, CUDA graphs of 200 launches, median of 15.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "miles_rmsnorm/forward.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;

// V: 1 approximate rsqrt, 2 no weights, 4 no rstd store, 8 no y store (rstd only), 16 no loads (constants)
template <int V>
__global__ void __launch_bounds__(1024, 1) mini(const XT* __restrict__ x, const WT* __restrict__ w,
                                                XT* __restrict__ y, float* __restrict__ rstd, int rows, float eps) {
  const int row = blockIdx.x;
  const int lane = threadIdx.x;
  uint4 h = (V & 16) ? make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u)
                     : load_raw<XT>(x + static_cast<int64_t>(row) * 256 + lane * 8);
  RawWeight8<WT> wv[1];
  if constexpr ((V & 2) == 0) { load_raw_weights<WT, 1>(w, 32, lane, 32, wv); wv[0].hold(); }
  float ss = 0.f;
#pragma unroll
  for (int e = 0; e < 8; ++e) { const float v = unpack<XT>(h, e); ss += v * v; }
  ss = lane_sum_once(ss, 32);
  const float r = (V & 1) ? rsqrtf(ss / 256.f + eps) : row_rstd(ss, 256.f, eps);
  if constexpr ((V & 8) == 0) {
    float out[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = unpack<XT>(h, e) * r * ((V & 2) ? 1.0f : effective_weight(wv[0].get(e), false));
    store8_vector<XT>(y + static_cast<int64_t>(row) * 256 + lane * 8, out);
  }
  if ((V & 4) == 0 && lane == 0) rstd[row] = r;
}

__global__ void empty_kernel(const ForwardParams p) {}
__global__ void empty_args(const XT* x, const WT* w, XT* y, float* r, int rows, float eps) {}

template <typename F>
float time_graph(F launch, cudaStream_t s) {
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < 200; ++i) launch(s);
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

int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  const int H = 256;
  for (int T : {1, 64}) {
    void *x, *w, *y; float* r;
    cudaMalloc(&x, (size_t)T * H * 2); cudaMalloc(&w, H * 2); cudaMalloc(&y, (size_t)T * H * 2); cudaMalloc(&r, T * 4);
    cudaMemset(x, 0x3c, (size_t)T * H * 2); cudaMemset(w, 0x3c, H * 2);
    ForwardParams p{};
    p.x = x; p.w = w; p.y = y; p.rstd = r; p.rows = T; p.hidden = H; p.heads = 1;
    p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.tpr = 32; p.groups = 1;
    p.group_magic = (unsigned)(((1ull << 32) + 31) / 32);
    const XT* xc = (const XT*)x; const WT* wc = (const WT*)w; XT* yc = (XT*)y;
    for (int rep = 0; rep < 2; ++rep) {
      printf("T=%d empty(params) %.3f  empty(args) %.3f\n", T,
             time_graph([&](cudaStream_t st) { empty_kernel<<<T, 32, 0, st>>>(p); }, s),
             time_graph([&](cudaStream_t st) { empty_args<<<T, 32, 0, st>>>(xc, wc, yc, r, T, 1e-6f); }, s));
      printf("T=%d package(vpt1,tpr32) %.3f  package(vpt2,tpr16 x2rows) %.3f\n", T,
             time_graph([&](cudaStream_t st) { forward_rows_kernel<XT, WT, 1, true, 0><<<T, 32, 0, st>>>(p); }, s),
             [&] { ForwardParams q = p; q.tpr = 16; q.groups = 2; q.group_magic = (unsigned)(((1ull << 32) + 15) / 16);
                   return time_graph([&](cudaStream_t st) { forward_rows_kernel<XT, WT, 2, true, 0><<<(T + 1) / 2, 32, 0, st>>>(q); }, s); }());
#define M(V) printf("T=%d mini V=%-2d %.3f\n", T, V, time_graph([&](cudaStream_t st) { mini<V><<<T, 32, 0, st>>>(xc, wc, yc, r, T, 1e-6f); }, s));
      M(0) M(1) M(2) M(4) M(8) M(16) M(3) M(19)
    }
    cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(r);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
