// Session 43 (from session 42's): where a column-cluster call's time goes. Launches the row-and-
// column kernel (its stamped copy, make_stamped.py) as the package's launcher would for BF16 rows
// and weights, no contract flags, and prints per phase the median over 30 calls of the median and
// the last CTA's stamp (us from the call's first CTA entry), and where the CTAs ran: the SMs the
// column CTAs used, the most column CTAs on one SM and the most CTAs on one SM. Cold: a 256 MB
// memset before each call. `vectors` > 0: the column clusters take that many vectors (the
// kernel's bits do not depend on it), so the column CTAs spread over more SMs.
#include <cuda_bf16.h>
#include <algorithm>
#include <map>
#include <set>
#include <cstdio>
#include <vector>
#include "miles_rmsnorm/backward_row_column.cuh"
#include "probe_inputs.cuh"

using namespace miles_rmsnorm;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <bool CAST>
static void run(int tokens, int heads, int of, int hidden, bool cold, void* flush, int vectors) {
  const int rows = tokens * heads;
  BackwardParams p{};
  const size_t in_bytes = (size_t)tokens * of * hidden * 2;
  p.g = dev_random(in_bytes, 1u + rows, false);
  p.x = dev_random(in_bytes, 2u + hidden, false);
  p.w = dev_random(hidden * 2, 4u, true);
  std::vector<float> hr(rows);
  for (int i = 0; i < rows; ++i) hr[i] = 0.7f + 0.01f * (i % 50);
  float* r; cudaMalloc(&r, rows * 4); cudaMemcpy(r, hr.data(), rows * 4, cudaMemcpyHostToDevice);
  p.rstd = r;
  cudaMalloc(&p.dx, (size_t)rows * hidden * 2);
  cudaMalloc(&p.dw, hidden * 4);
  p.rows = rows; p.hidden = hidden; p.heads = heads;
  const int64_t stride = (int64_t)of * hidden;
  p.g_addr = {heads == 1 ? hidden : stride, heads == 1 ? 0 : hidden};
  p.x_addr = p.g_addr; p.gh_addr = p.g_addr;
  p.flags = CAST ? kCastBeforeWeightMul : 0;
  const SmallBackwardShape s = small_backward_shape(rows, hidden);
  p.tpr = s.tpr;
  RowColumnShape rc = row_column_shape(s, rows, hidden, true);
  if (vectors > 0) {
    rc.vectors = vectors;
    rc.column_ctas = (hidden / 8 + vectors - 1) / vectors * rc.cluster;
  }
  const bool wide = row_column_wide_batch(s, rc);
  if (!wide) { printf("%d x %d: not a wide column-cluster call\n", rows, hidden); return; }
  auto kernel = backward_row_column_kernel<__nv_bfloat16, __nv_bfloat16, kRowColumnWideBatch,
                                           false, true>;
  const unsigned grid = rc.row_ctas + rc.column_ctas;
  std::vector<unsigned long long> st(grid * 8);
  const int phases = 8;
  std::vector<std::vector<double>> med(phases), last(phases);
  std::vector<double> total, col_sms, col_per_sm, ctas_per_sm;
  for (int rep = 0; rep < 33; ++rep) {
    if (cold) cudaMemset(flush, rep & 0xff, 256u << 20);
    cudaMemset((void*)0, 0, 0);
    std::vector<unsigned long long> zero(grid * 8, 0);
    cudaMemcpyToSymbol(g_stamps, zero.data(), grid * 8 * 8);
    OneDimLaunch launch(grid, rc.block, 0, 0);
    launch.cluster(rc.cluster);
    cudaLaunchKernelEx(&launch.config, kernel, p, s, rc);
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("launch failed\n"); return; }
    cudaMemcpyFromSymbol(st.data(), g_stamps, grid * 8 * 8);
    if (rep < 3) continue;
    std::set<unsigned long long> sms;
    std::map<unsigned long long, int> col, all;
    for (unsigned c = 0; c < grid; ++c) {
      const unsigned long long sm = st[c * 8 + 5];
      if ((int)c < rc.column_ctas) { sms.insert(sm); ++col[sm]; }
      ++all[sm];
    }
    int most_col = 0, most = 0;
    for (auto& kv : col) most_col = std::max(most_col, kv.second);
    for (auto& kv : all) most = std::max(most, kv.second);
    col_sms.push_back(sms.size()); col_per_sm.push_back(most_col); ctas_per_sm.push_back(most);
    unsigned long long t0 = ~0ull, tend = 0;
    for (unsigned c = 0; c < grid; ++c) t0 = std::min(t0, st[c * 8]);
    for (int k = 0; k < phases; ++k) {
      std::vector<double> v;
      for (unsigned c = 0; c < grid; ++c) {
        const bool column = (int)c < rc.column_ctas;
        const bool mine = k != 5 && (k == 0 || (k == 7 ? !column : column));
        if (mine && st[c * 8 + k] != 0) v.push_back((st[c * 8 + k] - t0) / 1000.0);
        if (mine && st[c * 8 + k] != 0) tend = std::max(tend, st[c * 8 + k]);
      }
      if (v.empty()) continue;
      med[k].push_back(median(v));
      last[k].push_back(*std::max_element(v.begin(), v.end()));
    }
    total.push_back((tend - t0) / 1000.0);
  }
  printf("%s %4d rows (%s) x %d, %s, %d column + %d row CTAs of %d (%d vectors a cluster): "
         "first entry to last stamp %.2f us\n", cold ? "cold" : "warm", rows,
         heads == 1 ? "contiguous" : "per-head", hidden, CAST ? "cast" : "default",
         rc.column_ctas, rc.row_ctas, rc.block, rc.vectors, median(total));
  printf("  column CTAs on %.0f SMs, at most %.0f on one; at most %.0f CTAs on one SM\n",
         median(col_sms), median(col_per_sm), median(ctas_per_sm));
  const char* names[phases] = {"entry (all CTAs)", "col: register batch added", "col: staged rows added",
                               "col: groups added, waited", "col: peers' sums received",
                               "(SM)", "col: dw stored", "row: dx stored"};
  for (int k = 0; k < phases; ++k) {
    if (med[k].empty()) continue;
    printf("  %-28s median %6.2f  last %6.2f\n", names[k], median(med[k]), median(last[k]));
  }
  cudaFree((void*)p.g); cudaFree((void*)p.x); cudaFree((void*)p.w); cudaFree(r);
  cudaFree(p.dx); cudaFree(p.dw);
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  void* flush; cudaMalloc(&flush, 256u << 20);
  // Call 1: vectors 0, 4 and 2 on the four cold shapes, then warm per-head at 0 and 2.
  const bool all = argc > 1 && argv[1][0] == 'a';
  for (int vectors : {0, 4, 2}) {
    run<false>(64, 24, 32, 256, true, flush, vectors);
    if (!all) continue;
    run<false>(1536, 1, 1, 256, true, flush, vectors);
    run<false>(2048, 1, 1, 256, true, flush, vectors);
    run<false>(1536, 1, 1, 512, true, flush, vectors);
  }
  run<false>(64, 24, 32, 256, false, flush, 0);
  if (all) run<false>(64, 24, 32, 256, false, flush, 2);
  return 0;
}
