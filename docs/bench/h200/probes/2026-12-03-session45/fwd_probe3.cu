// Session 45, call 6: a programmatic dependent launch (PDL) of the residual forward's fixed kernel
// after a kernel that fills 256 MB (as the harness's L2 flush, a fill kernel). Step 33 measured
// PDL on the backward 0.3-0.6 us slower at small T (the kernel waiting for the previous grid at
// entry); here the kernel may also prefetch its row and weights into L2 before it waits (a
// prefetch returns no value, so the loads after the wait still see the previous grid's writes).
//   V0: the package's forward_fixed_kernel, plain launch.
//   pdl<PF>: a copy of it (contiguous rows, the weights tied, as the package's since step 80)
//     that runs griddepcontrol.wait before its first load; PF: prefetch.global.L2 of each of the
//     thread's row and weight vectors before the wait. Launched with and without the PDL
//     attribute (programmaticStreamSerialization); without it the wait returns at once.
// Per launch: a graph of 20 (fill; kernel) minus a graph of the 20 fills (median of 15 replays).
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "miles_rmsnorm/forward_fixed.cuh"
#include "miles_rmsnorm/launch.h"
#include "graph_timer.cuh"
#include "probe_inputs.cuh"

using namespace miles_rmsnorm;
using bf16 = __nv_bfloat16;

__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

template <int TPR, bool PF>
__global__ void __launch_bounds__(1024, forward_rows_min_blocks<true>())
    pdl(const ForwardParams p) {
  constexpr int VPT = 2;
  using Row = FixedRow<VPT, TPR, kResidual>;
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x);
  const bf16* wp = static_cast<const bf16*>(p.w);
  const bf16* xr = static_cast<const bf16*>(p.x) + wide_row_offset(row, false, 1, p.x_addr);
  const bf16* ur = static_cast<const bf16*>(p.u) + wide_row_offset(row, false, 1, p.u_addr);
  if constexpr (PF) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      prefetch_l2(wp + (lane + k * TPR) * 8);
      prefetch_l2(xr + (lane + k * TPR) * 8);
      prefetch_l2(ur + (lane + k * TPR) * 8);
    }
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  RawWeight8<bf16> w[VPT];
  uint4 h[VPT], u[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    h[k] = load_raw<bf16>(xr + (lane + k * TPR) * 8);
    u[k] = load_raw<bf16>(ur + (lane + k * TPR) * 8);
  }
  u[0].x |= fixed_tie<bf16, VPT>(w, p.rows);
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  bf16* hr = static_cast<bf16*>(p.h_new) + static_cast<int64_t>(row) * Row::kHidden;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    h[k] = residual_sum<bf16>(h[k], u[k]);
    store_vector(hr + (lane + k * TPR) * 8, h[k]);
  }
  const float ss = fixed_row_sum<TPR>(sum_of_squares<bf16, VPT>(h), partials);
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss, static_cast<float>(Row::kHidden), p.eps);
  bf16* yr = static_cast<bf16*>(p.y) + static_cast<int64_t>(row) * Row::kHidden;
  store_row<bf16, bf16, VPT, false, false>(yr, h, w, r, Row::kNv, lane, TPR);
  if (lane == 0) p.rstd[row] = r;
}

using Kernel = void (*)(ForwardParams);

static void launch(Kernel k, const ForwardParams& p, unsigned block, bool use_pdl, cudaStream_t s) {
  OneDimLaunch l(static_cast<unsigned>(p.rows), block, 0, s);
  if (use_pdl) {
    l.attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    l.attr.val.programmaticStreamSerializationAllowed = 1;
    l.config.numAttrs = 1;
  }
  if (cudaLaunchKernelEx(&l.config, k, p) != cudaSuccess) {
    printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError())); exit(1);
  }
}

template <int TPR>
static void shape(int rows, cudaStream_t s) {
  const int hidden = 16 * TPR;
  ForwardParams p{};
  const size_t bytes = static_cast<size_t>(rows) * hidden * 2;
  p.x = dev_random(bytes, 11u + hidden, false);
  p.u = dev_random(bytes, 23u + rows, false);
  p.w = dev_random(hidden * 2, 5u, true);
  cudaMalloc(&p.y, bytes); cudaMalloc(&p.h_new, bytes); cudaMalloc(&p.rstd, rows * 4);
  p.rows = rows; p.hidden = hidden; p.heads = 1;
  p.x_addr = {hidden, 0}; p.u_addr = {hidden, 0};
  p.eps = 1e-6f; p.flags = kResidual; p.tpr = TPR; p.groups = 1;
  const Kernel pkg = forward_fixed_kernel<bf16, bf16, 2, TPR, kResidual, true>;
  std::vector<uint16_t> ref(bytes / 2), got(bytes / 2);
  launch(pkg, p, TPR, false, s);
  cudaStreamSynchronize(s);
  cudaMemcpy(ref.data(), p.y, bytes, cudaMemcpyDeviceToHost);
  struct V { const char* name; Kernel k; bool use_pdl; };
  const V vs[] = {{"package", pkg, false},
                  {"wait, no PDL", pdl<TPR, false>, false},
                  {"wait, PDL", pdl<TPR, false>, true},
                  {"prefetch + wait, no PDL", pdl<TPR, true>, false},
                  {"prefetch + wait, PDL", pdl<TPR, true>, true}};
  for (const V& v : vs) {
    cudaMemset(p.y, 0x7f, bytes);
    launch(v.k, p, TPR, v.use_pdl, s);
    cudaStreamSynchronize(s);
    cudaMemcpy(got.data(), p.y, bytes, cudaMemcpyDeviceToHost);
    const float t = time_cold_fill([&](cudaStream_t st) { launch(v.k, p, TPR, v.use_pdl, st); }, s);
    printf("%3d x %5d  %-24s %5.2f us  y %s\n", rows, hidden, v.name, t,
           got == ref ? "same" : "DIFFER");
  }
}

int main() {
  cudaStream_t s = probe_stream();  // and the 256 MB flush buffer
  for (int pass = 0; pass < 3; ++pass) {
    shape<384>(64, s);
    shape<256>(64, s);
    shape<384>(1, s);
    shape<512>(16, s);
  }
  return 0;
}
