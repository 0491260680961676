// Session 23 probe: where a multi-cluster small backward call's tail goes (dx done -> end), and
// whether a prefetched counter line or no dx stores shorten it (call 2). Build from
// miles_ext_kernels/kernels/rmsnorm, with the stamped kernel generated first (make_tail.py
// DIR/tail_stamped.cuh, from the repository root) and DIR on the include path:
//   nvcc -gencode=arch=compute_90a,code=sm_90a --prec-div=true --prec-sqrt=true --ftz=false \
//     -std=c++17 -O3 -Iinclude -IDIR -o /tmp/tail_micro <this directory>/tail_micro.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "../csrc/miles_rmsnorm_bwd_small_kernel.cu"
#include "../graph_timer.cuh"  // time_graph, g_flush
#include "../probe_inputs.cuh"  // dev_random
#include "tail_stamped.cuh"  // make_tail.py
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;

template <int V, bool RES, int B>
static cudaError_t launch_tail(const BackwardParams& p, const SmallBackwardShape& s, cudaStream_t st) {
  auto kernel = tail_kernel<XT, XT, B, RES, true, 0, V>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  OneDimLaunch l(s.ctas * s.clusters, s.block, 0, st);
  l.cluster(s.ctas);
  return cudaLaunchKernelEx(&l.config, kernel, p, s);
}

template <int V>
static cudaError_t launch_v(const BackwardParams& p, const SmallBackwardShape& s, bool res, cudaStream_t st) {
  // the package's batch: the rows of a group where it has one or two, else four
  if (s.rows_per_group == 1) return res ? launch_tail<V, true, 1>(p, s, st) : launch_tail<V, false, 1>(p, s, st);
  if (s.rows_per_group == 2) return res ? launch_tail<V, true, 2>(p, s, st) : launch_tail<V, false, 2>(p, s, st);
  return res ? launch_tail<V, true, 4>(p, s, st) : launch_tail<V, false, 4>(p, s, st);
}

static void run_case(cudaStream_t st, int rows, int hidden, bool residual) {
  const size_t bytes = (size_t)rows * hidden * 2;
  BackwardParams p{};
  p.g = dev_random(bytes, 1u + rows, false);
  p.x = dev_random(bytes, 2u + hidden, false);
  p.g_h = residual ? dev_random(bytes, 3u, false) : nullptr;
  p.w = dev_random(hidden * 2, 4u, true);
  std::vector<float> hr(rows);
  for (int i = 0; i < rows; ++i) hr[i] = 0.7f + 0.01f * i;
  float* r; cudaMalloc(&r, rows * 4); cudaMemcpy(r, hr.data(), rows * 4, cudaMemcpyHostToDevice);
  p.rstd = r;
  cudaMalloc(&p.dx, bytes);
  cudaMalloc(&p.dw, hidden * 4);
  const SmallBackwardShape s = small_backward_shape(rows, hidden);
  cudaMalloc(&p.partial, (size_t)s.clusters * hidden * 8);
  cudaMalloc(&p.counters, 64 * 4); cudaMemset(p.counters, 0, 64 * 4);
  p.rows = rows; p.hidden = hidden; p.heads = 1;
  p.g_addr = {hidden, 0}; p.x_addr = {hidden, 0}; p.gh_addr = {hidden, 0};
  p.flags = residual ? kResidual : 0; p.tpr = s.tpr;
  auto pkg = [&](cudaStream_t t) { miles_rmsnorm_backward_small_launch(&p, &s, kBF16, kBF16, t); };
  pkg(st);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<float> ref_dw(hidden), got_dw(hidden);
  std::vector<uint16_t> ref_dx(bytes / 2), got_dx(bytes / 2);
  cudaMemcpy(ref_dw.data(), p.dw, hidden * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(ref_dx.data(), p.dx, bytes, cudaMemcpyDeviceToHost);
  printf("%3d x %5d %-8s clusters %d ctas %2d block %3d groups %2d rows/group %2d | package warm %5.2f cold %5.2f (%s)\n",
         rows, hidden, residual ? "residual" : "plain", s.clusters, s.ctas, s.block, s.row_groups,
         s.rows_per_group, time_graph(pkg, st, false), time_graph(pkg, st, true), cudaGetErrorString(e));
  const int grid = s.ctas * s.clusters;
  unsigned long long* stamps; cudaMalloc(&stamps, grid * 8 * 8);
  cudaMemcpyToSymbol(g_tail_stamps, &stamps, sizeof(stamps));
  const char* vname[4] = {"as is", "counter prefetched", "no dx stores", "both"};
  for (int v = 0; v < 4; ++v) {
    auto launch = [&](cudaStream_t t) {
      switch (v) {
        case 0: return launch_v<0>(p, s, residual, t);
        case 1: return launch_v<1>(p, s, residual, t);
        case 2: return launch_v<2>(p, s, residual, t);
        default: return launch_v<3>(p, s, residual, t);
      }
    };
    cudaMemset(p.dw, 0xff, hidden * 4);
    cudaMemset(p.dx, 0xff, bytes);
    e = launch(st);
    cudaError_t e2 = cudaDeviceSynchronize();
    cudaMemcpy(got_dw.data(), p.dw, hidden * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(got_dx.data(), p.dx, bytes, cudaMemcpyDeviceToHost);
    const bool dw_same = std::memcmp(ref_dw.data(), got_dw.data(), hidden * 4) == 0;
    const bool dx_same = std::memcmp(ref_dx.data(), got_dx.data(), bytes) == 0;
    const float warm = time_graph(launch, st, false), cold = time_graph(launch, st, true);
    // stamps, cold launches
    const int reps = 40;
    std::vector<unsigned long long> h(grid * 8);
    std::vector<std::vector<double>> lo(7), hi(7);
    for (int rep = 0; rep < reps; ++rep) {
      cudaMemsetAsync(g_flush, rep & 0xff, g_flush_bytes, st);
      launch(st);
      cudaStreamSynchronize(st);
      cudaMemcpy(h.data(), stamps, grid * 8 * 8, cudaMemcpyDeviceToHost);
      unsigned long long t0 = ~0ull;
      for (int b = 0; b < grid; ++b) t0 = std::min(t0, h[b * 8]);
      for (int i = 1; i < 7; ++i) {
        double a = 1e30, z = 0;
        for (int b = 0; b < grid; ++b) {
          const unsigned long long x = h[b * 8 + i];
          if (x == 0) continue;
          a = std::min(a, (x - t0) / 1000.0); z = std::max(z, (x - t0) / 1000.0);
        }
        lo[i].push_back(a); hi[i].push_back(z);
      }
    }
    auto med = [](std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
    const char* names[7] = {"entry", "dx", "sums", "bar", "counter", "fold", "end"};
    printf("  %-18s warm %5.2f cold %5.2f dx %s dw %s (%s/%s) | cold stamps first/last:", vname[v], warm, cold,
           dx_same ? "same" : (v & 2 ? "unwritten" : "DIFFERENT"), dw_same ? "same" : "DIFFERENT",
           cudaGetErrorString(e), cudaGetErrorString(e2));
    for (int i = 1; i < 7; ++i) printf(" %s %.2f/%.2f", names[i], med(lo[i]), med(hi[i]));
    printf("\n");
  }
  cudaFree(stamps);
  cudaFree((void*)p.g); cudaFree((void*)p.x); if (residual) cudaFree((void*)p.g_h); cudaFree((void*)p.w);
  cudaFree(r); cudaFree(p.dx); cudaFree(p.dw); cudaFree(p.partial); cudaFree(p.counters);
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaStream_t s; cudaStreamCreate(&s);
  cudaMalloc(&g_flush, g_flush_bytes);
  run_case(s, 64, 4096, false);
  run_case(s, 64, 4096, true);
  run_case(s, 64, 2048, false);
  run_case(s, 64, 6144, true);
  run_case(s, 64, 8192, false);
  run_case(s, 256, 4096, false);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
