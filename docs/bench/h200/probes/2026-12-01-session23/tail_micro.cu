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
#include "../small_backward_inputs.cuh"  // small_backward_inputs
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

static void run_case(cudaStream_t st, unsigned long long* stamps, int rows, int hidden,
                     bool residual) {
  const size_t bytes = (size_t)rows * hidden * 2;
  const SmallBackwardShape s = small_backward_shape(rows, hidden);
  BackwardParams p = small_backward_inputs(rows, hidden, residual, s.clusters, s.tpr);
  cudaError_t e;
  const std::vector<float> ref_dw = package_dw(p, s, st, &e);
  auto pkg = [&](cudaStream_t t) { miles_rmsnorm_backward_small_launch(&p, &s, kBF16, kBF16, t); };
  std::vector<uint16_t> ref_dx(bytes / 2), got_dx(bytes / 2);
  cudaMemcpy(ref_dx.data(), p.dx, bytes, cudaMemcpyDeviceToHost);
  printf("%3d x %5d %-8s clusters %d ctas %2d block %3d groups %2d rows/group %2d | package warm %5.2f cold %5.2f (%s)\n",
         rows, hidden, residual ? "residual" : "plain", s.clusters, s.ctas, s.block, s.row_groups,
         s.rows_per_group, time_graph(pkg, st, false), time_graph(pkg, st, true), cudaGetErrorString(e));
  const int grid = s.ctas * s.clusters;
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
    std::vector<float> got_dw(hidden);
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
  free_small_backward_inputs(p);
}

int main() {
  cudaStream_t s = probe_stream();
  unsigned long long* stamps;  // eight a CTA, 128 CTAs at most
  cudaMalloc(&stamps, 128 * 8 * 8);
  cudaMemcpyToSymbol(g_tail_stamps, &stamps, sizeof(stamps));
  run_case(s, stamps, 64, 4096, false);
  run_case(s, stamps, 64, 4096, true);
  run_case(s, stamps, 64, 2048, false);
  run_case(s, stamps, 64, 6144, true);
  run_case(s, stamps, 64, 8192, false);
  run_case(s, stamps, 256, 4096, false);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
