// Build from miles_ext_kernels/kernels/rmsnorm, with the stamped kernel generated first
// (make_stamped.py DIR/bsmall_stamped.cuh, from the repository root) and DIR on the include path:
//   nvcc -gencode=arch=compute_90a,code=sm_90a --prec-div=true --prec-sqrt=true --ftz=false \
//     -std=c++17 -O3 -Iinclude -IDIR -o /tmp/bsmall_micro <this directory>/bsmall_micro.cu
// Session 22 probe: where a small backward call's time goes. The package's small-batch launcher
// (cold/warm graph timings) and a stamped copy of its kernel (globaltimer at five points, thread
// 0 of each CTA; medians over cold single launches), next to a plain stream of the same bytes.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "../csrc/miles_rmsnorm_bwd_small_kernel.cu"
#include "bsmall_stamped.cuh"  // make_stamped.py
using namespace miles_rmsnorm;
using XT = __nv_bfloat16;

#include "../graph_timer.cuh"  // time_graph, g_flush
#include "../small_backward_inputs.cuh"  // small_backward_inputs

template <bool PF>
void run_case(cudaStream_t st, int rows, int hidden, bool residual) {
  const SmallBackwardShape s = small_backward_shape(rows, hidden);
  BackwardParams p = small_backward_inputs(rows, hidden, residual, s.clusters, s.tpr);
  cudaError_t e;
  const std::vector<float> ref_dw = package_dw(p, s, st, &e);
  std::vector<float> got_dw(hidden);
  auto pkg = [&](cudaStream_t t) { miles_rmsnorm_backward_small_launch(&p, &s, kBF16, kBF16, t); };
  const float warm = time_graph(pkg, st, false), cold = time_graph(pkg, st, true);
  printf("%3d x %5d %-8s clusters %d ctas %2d block %3d groups %2d rows/group %2d | package warm %5.2f cold %5.2f (%s)\n",
         rows, hidden, residual ? "residual" : "plain", s.clusters, s.ctas, s.block, s.row_groups,
         s.rows_per_group, warm, cold, cudaGetErrorString(e));
  // The stamped kernel: the shapes the package launched (B from rows_per_group).
  const int grid = s.ctas * s.clusters;
  unsigned long long* stamps; cudaMalloc(&stamps, grid * 16 * 8);
  cudaMemcpyToSymbol(g_stamps, &stamps, sizeof(stamps));
  auto launch_stamped = [&](auto kernel) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    OneDimLaunch l(grid, s.block, 0, st);
    if (s.ctas > 1) l.cluster(s.ctas);
    return cudaLaunchKernelEx(&l.config, kernel, p, s);
  };
  auto stamped = [&]() {
    const int B = s.rows_per_group == 1 ? 1 : s.rows_per_group == 2 ? 2 : 4;
    constexpr int C = kRuntimeContract;
    if (residual) {
      if (B == 4) return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 4, true, true, 0, PF>) : launch_stamped(stamped_kernel<XT, XT, 4, true, false, 0, PF>);
      if (B == 2) return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 2, true, true, C, PF>) : launch_stamped(stamped_kernel<XT, XT, 2, true, false, C, PF>);
      return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 1, true, true, C, PF>) : launch_stamped(stamped_kernel<XT, XT, 1, true, false, C, PF>);
    }
    if (B == 4) return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 4, false, true, 0, PF>) : launch_stamped(stamped_kernel<XT, XT, 4, false, false, 0, PF>);
    if (B == 2) return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 2, false, true, C, PF>) : launch_stamped(stamped_kernel<XT, XT, 2, false, false, C, PF>);
    return s.clusters > 1 ? launch_stamped(stamped_kernel<XT, XT, 1, false, true, C, PF>) : launch_stamped(stamped_kernel<XT, XT, 1, false, false, C, PF>);
  };
  const int reps = 40;
  std::vector<unsigned long long> h(grid * 16);
  const char* names[8] = {"entry", "issued", "barriers", "landed", "exchanged", "row0", "dx", "end"};
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  // mode 0: flush, launch (cold); 1: flush, a launch of no rows (code, parameters and weights
  // warm), launch; 2: no flush (warm)
  for (int mode = 0; mode < 3; mode += 2) {
    std::vector<std::vector<double>> first(8), last(8);
    std::vector<double> setup, weights, ghz;
    for (int rep = 0; rep < reps; ++rep) {
      if (mode < 2) cudaMemsetAsync(g_flush, rep & 0xff, g_flush_bytes, st);
      if (mode == 1) {
        const int64_t keep = p.rows;
        p.rows = 0;
        stamped();
        p.rows = keep;
      }
      e = stamped();
      cudaStreamSynchronize(st);
      cudaMemcpy(h.data(), stamps, grid * 16 * 8, cudaMemcpyDeviceToHost);
      unsigned long long t0 = ~0ull;
      for (int b = 0; b < grid; ++b) t0 = std::min(t0, h[b * 16]);
      for (int i = 0; i < 8; ++i) {
        unsigned long long lo = ~0ull, hi = 0;
        for (int b = 0; b < grid; ++b) { lo = std::min(lo, h[b * 16 + i]); hi = std::max(hi, h[b * 16 + i]); }
        first[i].push_back((lo - t0) / 1000.0);
        last[i].push_back((hi - t0) / 1000.0);
      }
      setup.push_back((h[10] - h[0]) / 1000.0);
      weights.push_back((h[11] - h[0]) / 1000.0);
      ghz.push_back(double(h[9] - h[8]) / double(h[7] - h[0]));
    }
    cudaMemcpy(got_dw.data(), p.dw, hidden * 4, cudaMemcpyDeviceToHost);
    const bool same = std::memcmp(ref_dw.data(), got_dw.data(), hidden * 4) == 0;
    const char* mode_name[3] = {"cold", "code warm", "warm"};
    printf("    %s%-9s (%s, dw %s):", PF ? "flat " : "", mode_name[mode], cudaGetErrorString(e), same ? "same" : "DIFFERENT");
    printf(" CTA0: setup %.2f weights %.2f; SM GHz %.2f;", med(setup), med(weights), med(ghz));
    for (int i = 1; i < 8; ++i) printf(" %s %.2f/%.2f", names[i], med(first[i]), med(last[i]));
    printf("\n");
  }
  cudaFree(stamps);
  free_small_backward_inputs(p);
}

int main() {
  cudaStream_t s = probe_stream();
  for (int pass = 0; pass < 1; ++pass) {
    for (int hidden : {4096, 6144, 8192}) {
      for (bool res : {false, true}) {
        run_case<false>(s, 16, hidden, res);
        run_case<true>(s, 16, hidden, res);
      }
    }
    run_case<false>(s, 64, 8192, false);
    run_case<true>(s, 64, 8192, false);
    run_case<false>(s, 1, 4096, false);
    run_case<true>(s, 1, 4096, false);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
