// Is the package kernel's 0.2 us over a minimal kernel (same arithmetic) the parameter block?
// H = 256 (VPT 1, tpr 32) and H = 2048 (VPT 2, tpr 128). Warm L2, graphs of 200 launches.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "miles_rmsnorm/forward.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;

struct Compact {  // 64 bytes: what the plain small-batch path reads
  const void* x; const void* w; void* y; float* rstd;
  int rows; int hidden; int tpr; unsigned group_magic;
  int groups; float eps; int64_t stride;
};

// The package's forward_rows_kernel<XT, WT, VPT, true, 0> body over a parameter type P.
// V: 1 fields first read into registers at entry (one load each, before any use)
template <int VPT, typename P, int V>
__global__ void __launch_bounds__(1024, 1) body(const P p) {
  __shared__ __align__(16) float scratch_mem[2 * 32];
  const int tpr = p.tpr;
  const int group = static_cast<int>(__umulhi(threadIdx.x, p.group_magic));
  const int lane = static_cast<int>(threadIdx.x) - group * tpr;
  RowScratch<1> scratch = make_row_scratch<1>(scratch_mem, tpr, group);
  const int nv = static_cast<int>(p.hidden >> 3);
  const int row = static_cast<int>(blockIdx.x) * p.groups + group;
  const bool valid = row < static_cast<int>(p.rows);
  uint4 h[VPT];
  load_row_vectors<XT, VPT>(static_cast<const XT*>(p.x) + static_cast<int64_t>(static_cast<uint32_t>(valid ? row : 0)) * p.stride,
                            valid, nv, lane, tpr, h);
  RawWeight8<WT> w[VPT];
  load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  float ss[1] = {sum_of_squares<XT, VPT>(h)};
  row_sums<1, true>(ss, tpr, scratch);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss[0], static_cast<float>(p.hidden), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * p.hidden;
  store_row<XT, WT, VPT, false, false>(yr, h, w, r, nv, lane, tpr);
  if (lane == 0) p.rstd[row] = r;
}

// A minimal H = 256 row (VPT 1, tpr 32, one warp a row) taking its pointers from P.
template <typename P>
__global__ void __launch_bounds__(1024, 1) mini(const P p) {
  const int row = blockIdx.x;
  const int lane = threadIdx.x;
  uint4 h = load_raw<XT>(static_cast<const XT*>(p.x) + static_cast<int64_t>(row) * 256 + lane * 8);
  RawWeight8<WT> wv[1];
  load_raw_weights<WT, 1>(static_cast<const WT*>(p.w), 32, lane, 32, wv);
  wv[0].hold();
  float ss = 0.f;
#pragma unroll
  for (int e = 0; e < 8; ++e) { const float v = unpack<XT>(h, e); ss += v * v; }
  ss = lane_sum_once(ss, 32);
  const float r = row_rstd(ss, 256.f, p.eps);
  float out[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = unpack<XT>(h, e) * r * effective_weight(wv[0].get(e), false);
  store8_vector<XT>(static_cast<XT*>(p.y) + static_cast<int64_t>(row) * 256 + lane * 8, out);
  if (lane == 0) p.rstd[row] = r;
}

struct FullView {  // ForwardParams read through the same names as Compact
  ForwardParams q;
};

template <int VPT>
__global__ void __launch_bounds__(1024, 1) body_full(const ForwardParams p) {
  Compact c{p.x, p.w, p.y, p.rstd, (int)p.rows, (int)p.hidden, p.tpr, p.group_magic, p.groups, p.eps, p.x_addr.stride};
  (void)c;
}

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

template <int VPT>
void run(int H, int T, cudaStream_t s) {
  void *x, *w, *y; float* r;
  cudaMalloc(&x, (size_t)T * H * 2); cudaMalloc(&w, H * 2); cudaMalloc(&y, (size_t)T * H * 2); cudaMalloc(&r, T * 4);
  cudaMemset(x, 0x3c, (size_t)T * H * 2); cudaMemset(w, 0x3c, H * 2);
  const int tpr = VPT == 1 ? 32 : H / 16;
  const int groups = 1;
  ForwardParams p{};
  p.x = x; p.w = w; p.y = y; p.rstd = r; p.rows = T; p.hidden = H; p.heads = 1;
  p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.tpr = tpr; p.groups = groups;
  p.group_magic = (unsigned)(((1ull << 32) + tpr - 1) / tpr);
  Compact c{x, w, y, r, T, H, tpr, p.group_magic, groups, 1e-6f, H};
  std::vector<uint16_t> a((size_t)T * H), b((size_t)T * H);
  for (int rep = 0; rep < 2; ++rep) {
    const float t0 = time_graph([&](cudaStream_t st) { forward_rows_kernel<XT, WT, VPT, true, 0><<<T, tpr, 0, st>>>(p); }, s);
    cudaMemcpy(a.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
    const float t1 = time_graph([&](cudaStream_t st) { body<VPT, Compact, 0><<<T, tpr, 0, st>>>(c); }, s);
    cudaMemcpy(b.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
    const float t2 = time_graph([&](cudaStream_t st) { forward_rows_kernel<XT, WT, VPT, true, 0><<<T, tpr, 0, st>>>(p); }, s);
    printf("%4d x %5d  package %.3f  compact-params %.3f (%s)  package again %.3f\n", T, H, t0, t1, a == b ? "same" : "DIFF", t2);
    if (H == 256) {
      const float m1 = time_graph([&](cudaStream_t st) { mini<ForwardParams><<<T, 32, 0, st>>>(p); }, s);
      cudaMemcpy(b.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
      const bool same = a == b;
      const float m2 = time_graph([&](cudaStream_t st) { mini<Compact><<<T, 32, 0, st>>>(c); }, s);
      printf("%4d x %5d  minimal kernel, ForwardParams %.3f (%s)  minimal kernel, compact %.3f\n", T, H, m1, same ? "same" : "DIFF", m2);
    }
  }
  cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(r);
}

int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  for (int T : {1, 64}) { run<1>(256, T, s); run<2>(2048, T, s); run<2>(8192, T, s); }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
