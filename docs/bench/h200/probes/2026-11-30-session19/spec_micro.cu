// Does specialising the loop-free small-batch forward on a compile-time tpr (H = 16 * TPR, exact)
// shorten a small call? Package kernel vs the same body with constant tpr / nv (same bits), and
// with the second butterfly narrowed to the row's warps (same bits: the dropped levels add zeros).
// Warm L2, CUDA graphs of 200 back-to-back launches, median of 15.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "miles_rmsnorm/forward.cuh"
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;
using WT = __nv_bfloat16;

template <int TPR, bool NARROW>
__global__ void __launch_bounds__(1024, 1) ks(const ForwardParams p) {
  constexpr int VPT = 2;
  constexpr int tpr = TPR;
  constexpr int nv = 2 * TPR;
  constexpr int groups = TPR >= 32 ? 1 : 32 / TPR;
  __shared__ __align__(16) float scratch_mem[2 * 32];
  const int group = static_cast<int>(threadIdx.x) / tpr;
  const int lane = static_cast<int>(threadIdx.x) % tpr;
  RowScratch<1> scratch = make_row_scratch<1>(scratch_mem, tpr, group);
  const int row = static_cast<int>(blockIdx.x) * groups + group;
  const bool valid = row < static_cast<int>(p.rows);
  const bool per_head = p.heads != 1;
  uint4 h[VPT];
  load_row_vectors<XT, VPT>(static_cast<const XT*>(p.x) +
                                wide_row_offset(valid ? row : 0, per_head, p.heads, p.x_addr),
                            valid, nv, lane, tpr, h);
  RawWeight8<WT> w[VPT];
  load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), nv, lane, tpr, w);
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  float ss[1] = {sum_of_squares<XT, VPT>(h)};
  if constexpr (NARROW && TPR > 32) {
    float v = lane_sum_once(ss[0], 32);
    float* buffer = scratch.take();
    const int l = threadIdx.x & 31;
    if (l == 0) buffer[threadIdx.x >> 5] = v;
    __syncthreads();
    constexpr int warps = TPR / 32;
    v = l < warps ? buffer[l] : 0.0f;
#pragma unroll
    for (int off = warps / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    ss[0] = v;
  } else {
    row_sums<1, true>(ss, tpr, scratch);
  }
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss[0], static_cast<float>(nv * 8), p.eps);
  XT* yr = static_cast<XT*>(p.y) + static_cast<int64_t>(row) * (nv * 8);
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

template <int TPR>
void run(int T, cudaStream_t s) {
  const int H = 16 * TPR;
  ForwardParams p{};
  void *x, *w, *y; float* r;
  cudaMalloc(&x, (size_t)T * H * 2); cudaMalloc(&w, H * 2); cudaMalloc(&y, (size_t)T * H * 2);
  cudaMalloc(&r, T * 4);
  cudaMemset(x, 0x3c, (size_t)T * H * 2); cudaMemset(w, 0x3c, H * 2);
  const int groups = TPR >= 32 ? 1 : 32 / TPR;
  p.x = x; p.w = w; p.y = y; p.rstd = r; p.rows = T; p.hidden = H; p.heads = 1;
  p.x_addr = {H, 0}; p.u_addr = {H, 0}; p.eps = 1e-6f; p.flags = 0; p.tpr = TPR; p.groups = groups;
  p.group_magic = (unsigned)(((1ull << 32) + TPR - 1) / TPR);
  dim3 grid((T + groups - 1) / groups), block(groups * TPR);
  std::vector<float> out(T * (size_t)H / 2), ref(T * (size_t)H / 2);
  float t[5];
  for (int rep = 0; rep < 2; ++rep) {
    t[0] = time_graph(empty_kernel, grid, block, p, s);
    t[1] = time_graph(forward_rows_kernel<XT, WT, 2, true, 0>, grid, block, p, s);
    cudaMemcpy(ref.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
    t[2] = time_graph(ks<TPR, false>, grid, block, p, s);
    cudaMemcpy(out.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
    const bool same1 = out == ref;
    t[3] = time_graph(ks<TPR, true>, grid, block, p, s);
    cudaMemcpy(out.data(), y, (size_t)T * H * 2, cudaMemcpyDeviceToHost);
    const bool same2 = out == ref;
    t[4] = time_graph(forward_rows_kernel<XT, WT, 2, true, 0>, grid, block, p, s);
    printf("%5d x %5d  empty %.3f  package %.3f  const-tpr %.3f (%s)  narrow %.3f (%s)  package again %.3f\n",
           T, H, t[0], t[1], t[2], same1 ? "same" : "DIFF", t[3], same2 ? "same" : "DIFF", t[4]);
  }
  cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(r);
}

int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  for (int T : {1, 16, 64}) {
    run<16>(T, s); run<32>(T, s); run<128>(T, s); run<256>(T, s); run<512>(T, s);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
