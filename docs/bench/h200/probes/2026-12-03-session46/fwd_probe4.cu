// Session 46, call 1: the fixed forward kernel's instruction path after its row lands.
// In the package's sm_90a SASS of forward_fixed_kernel (BF16, residual, H = 6144) a warp runs
// ~340 instructions, three warps a scheduler; after the loads land it is issue-bound. Variants of
// a copy of it (same loads, same tie, same additions in the same order: same bits), MODE bits:
//   1: BF16 widened by moving bits (widen: the high element masked in place) for h, u and w,
//      where unpack takes a byte permute and a shift for the high element;
//   2: the residual's h_new packed two elements an instruction (cvt.rn.bf16x2.f32), its squares
//      widened from the packed words (16 single conversions and 8 permutes before);
//   4: the row sum's second level as a local tree over the warp partials read from shared memory
//      (the butterfly's additions, in its order) instead of a butterfly of shuffles.
// Per launch: a graph of 20 (256 MB fill kernel; kernel) minus the fills' graph, median of 15
// replays; passes interleave the variants. Bits of y, rstd, h_new checked against the package's.
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

template <bool WIDEN>
__device__ __forceinline__ float el(const uint4& v, int e) {
  if constexpr (WIDEN) return widen<bf16>(v, e);
  return unpack<bf16>(v, e);
}

__device__ __forceinline__ uint32_t cvt2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

template <int MODE>
__device__ __forceinline__ uint4 res_sum(uint4 h, uint4 u) {
  constexpr bool W = (MODE & 1) != 0;
  if constexpr ((MODE & 2) != 0) {
    uint4 o;
    o.x = cvt2(el<W>(h, 0) + el<W>(u, 0), el<W>(h, 1) + el<W>(u, 1));
    o.y = cvt2(el<W>(h, 2) + el<W>(u, 2), el<W>(h, 3) + el<W>(u, 3));
    o.z = cvt2(el<W>(h, 4) + el<W>(u, 4), el<W>(h, 5) + el<W>(u, 5));
    o.w = cvt2(el<W>(h, 6) + el<W>(u, 6), el<W>(h, 7) + el<W>(u, 7));
    return o;
  } else {
    float s[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) s[e] = el<W>(h, e) + el<W>(u, e);
    return pack8<bf16>(s);
  }
}

template <int TPR, int MODE>
__device__ __forceinline__ float row_sum(float v, float* buffer) {
  constexpr int kWarps = TPR / 32;
  constexpr int kWidth = warp_partials_width(kWarps);
  v = lane_sum_once(v, 32);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (lane == 0) buffer[threadIdx.x >> 5] = v;
  __syncthreads();
  if constexpr ((MODE & 4) != 0) {
    float c[kWidth];
#pragma unroll
    for (int j = 0; j < kWidth; ++j) c[j] = j < kWarps ? buffer[j] : 0.0f;
#pragma unroll
    for (int level = 1; level <= 5; ++level) {
      const int o = kWidth >> level;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        if (j < o && (j + o < kWarps || level > 1)) c[j] = c[j] + c[j + o];
      }
    }
    return c[0];
  } else {
    const int slot = lane & (kWidth - 1);
    v = slot < kWarps ? buffer[slot] : 0.0f;
    return lane_sum_once(v, kWidth);
  }
}

template <int VPT, bool WIDEN>
__device__ __forceinline__ float squares(const uint4 (&h)[VPT]) {
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float v = el<WIDEN>(h[k], e);
      ss += v * v;
    }
  }
  return ss;
}

template <int TPR, int FORM, int MODE>
__global__ void __launch_bounds__(1024, forward_rows_min_blocks<true>())
    var(const ForwardParams p) {
  constexpr int VPT = 2;
  constexpr bool W = (MODE & 1) != 0;
  using Row = FixedRow<VPT, TPR, FORM>;
  __shared__ __align__(16) float partials[32];
  __builtin_assume(threadIdx.x < TPR);
  const int lane = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.x);
  const bool valid = row < static_cast<int>(p.rows);
  const bf16* wp = static_cast<const bf16*>(p.w);
  RawWeight8<bf16> w[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].load_coherent(wp + (lane + k * TPR) * 8);
  uint4 h[VPT], u[VPT];
  if constexpr (Row::kRes) {
    if (!valid) return;
    const bf16* xr = static_cast<const bf16*>(p.x) + strided_row_offset(row, p.x_addr);
    const bf16* ur = static_cast<const bf16*>(p.u) + strided_row_offset(row, p.u_addr);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      h[k] = load_raw<bf16>(xr + (lane + k * TPR) * 8);
      u[k] = load_raw<bf16>(ur + (lane + k * TPR) * 8);
    }
    u[0].x |= fixed_tie<bf16, VPT>(w, p.rows);
  } else {
    load_row_vectors<bf16, VPT>(
        static_cast<const bf16*>(p.x) + strided_row_offset(valid ? row : 0, p.x_addr), valid,
        Row::kNv, lane, TPR, h);
    h[0].x |= fixed_tie<bf16, VPT>(w, p.rows);
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) w[k].hold();
  if constexpr (Row::kRes) {
    bf16* hr = static_cast<bf16*>(p.h_new) + static_cast<int64_t>(row) * Row::kHidden;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      h[k] = res_sum<MODE>(h[k], u[k]);
      store_vector(hr + (lane + k * TPR) * 8, h[k]);
    }
  }
  const float ss = row_sum<TPR, MODE>(squares<VPT, W || (MODE & 2) != 0>(h), partials);
  if (!valid) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) launder(h[k]);
  const float r = row_rstd(ss, static_cast<float>(Row::kHidden), p.eps);
  bf16* yr = static_cast<bf16*>(p.y) + static_cast<int64_t>(row) * Row::kHidden;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    float out[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = (el<W>(h[k], e) * r) * el<W>(w[k].v, e);
    store8_vector<bf16>(yr + (lane + k * TPR) * 8, out);
  }
  if (lane == 0) p.rstd[row] = r;
}

using Kernel = void (*)(ForwardParams);

static void launch(Kernel k, const ForwardParams& p, unsigned block, cudaStream_t s) {
  OneDimLaunch l(static_cast<unsigned>(p.rows), block, 0, s);
  if (cudaLaunchKernelEx(&l.config, k, p) != cudaSuccess) {
    printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError())); exit(1);
  }
}

struct Shape {
  int rows, hidden, tpr;
  bool res;
  ForwardParams p;
  std::vector<uint16_t> y, hn;
  std::vector<float> rstd;
};

static std::vector<uint16_t> d2h16(void* p, size_t n) {
  std::vector<uint16_t> v(n);
  cudaMemcpy(v.data(), p, n * 2, cudaMemcpyDeviceToHost);
  return v;
}

template <int TPR, int FORM>
static std::vector<std::pair<const char*, Kernel>> kernels() {
  return {{"package", forward_fixed_kernel<bf16, bf16, 2, TPR, FORM, true>},
          {"copy", var<TPR, FORM, 0>},
          {"widen", var<TPR, FORM, 1>},
          {"widen+pack2", var<TPR, FORM, 3>},
          {"tree", var<TPR, FORM, 4>},
          {"widen+tree", var<TPR, FORM, 5>},
          {"widen+pack2+tree", var<TPR, FORM, 7>}};
}

template <int TPR, int FORM>
static void shape(Shape& sh, cudaStream_t s, bool first, std::vector<float>& times) {
  ForwardParams& p = sh.p;
  const size_t n = static_cast<size_t>(sh.rows) * sh.hidden;
  auto ks = kernels<TPR, FORM>();
  int i = 0;
  for (auto& kv : ks) {
    if (first) {
      cudaMemset(p.y, 0x7f, n * 2);
      cudaMemset(p.rstd, 0x7f, sh.rows * 4);
      if (sh.res) cudaMemset(p.h_new, 0x7f, n * 2);
      launch(kv.second, p, TPR, s);
      cudaStreamSynchronize(s);
      auto y = d2h16(p.y, n);
      auto hn = sh.res ? d2h16(p.h_new, n) : std::vector<uint16_t>();
      std::vector<float> r(sh.rows);
      cudaMemcpy(r.data(), p.rstd, sh.rows * 4, cudaMemcpyDeviceToHost);
      if (i == 0) { sh.y = y; sh.hn = hn; sh.rstd = r; }
      const bool same = y == sh.y && hn == sh.hn &&
                        std::memcmp(r.data(), sh.rstd.data(), sh.rows * 4) == 0;
      if (!same) printf("%3d x %5d %s %-18s BITS DIFFER\n", sh.rows, sh.hidden,
                        sh.res ? "res  " : "plain", kv.first);
    }
    times.push_back(time_cold_fill([&](cudaStream_t st) { launch(kv.second, p, TPR, st); }, s));
    ++i;
  }
}

static Shape make(int rows, int tpr, bool res) {
  Shape sh{rows, 16 * tpr, tpr, res, {}, {}, {}, {}};
  ForwardParams& p = sh.p;
  const int hidden = sh.hidden;
  const size_t bytes = static_cast<size_t>(rows) * hidden * 2;
  p.x = dev_random(bytes, 11u + hidden, false);
  p.u = res ? dev_random(bytes, 23u + rows, false) : nullptr;
  p.w = dev_random(hidden * 2, 5u, true);
  cudaMalloc(&p.y, bytes); cudaMalloc(&p.h_new, bytes); cudaMalloc(&p.rstd, rows * 4);
  p.rows = rows; p.hidden = hidden; p.heads = 1;
  p.x_addr = {hidden, 0}; p.u_addr = {hidden, 0};
  p.eps = 1e-6f; p.flags = res ? kResidual : 0; p.tpr = tpr; p.groups = 1;
  return sh;
}

int main(int argc, char** argv) {
  const int passes = argc > 1 ? atoi(argv[1]) : 5;
  cudaStream_t s = probe_stream();  // and the 256 MB flush buffer
  std::vector<Shape> shapes = {make(64, 384, true), make(64, 256, true), make(64, 512, true),
                               make(16, 384, true), make(1, 384, true), make(64, 384, false),
                               make(1, 128, false)};
  const int nk = 7;
  std::vector<std::vector<float>> t(shapes.size() * nk);
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::vector<float> v;
      Shape& sh = shapes[i];
      const bool first = pass == 0;
      if (sh.res) {
        if (sh.tpr == 384) shape<384, kResidual>(sh, s, first, v);
        if (sh.tpr == 256) shape<256, kResidual>(sh, s, first, v);
        if (sh.tpr == 512) shape<512, kResidual>(sh, s, first, v);
      } else {
        if (sh.tpr == 384) shape<384, 0>(sh, s, first, v);
        if (sh.tpr == 128) shape<128, 0>(sh, s, first, v);
      }
      for (int k = 0; k < nk; ++k) t[i * nk + k].push_back(v[k]);
    }
    printf("pass %d done\n", pass);
  }
  auto names = kernels<384, 0>();
  printf("\nmedian over %d passes, cold us (min-max)\n%-16s", passes, "shape");
  for (auto& kv : names) printf(" %18s", kv.first);
  printf("\n");
  for (size_t i = 0; i < shapes.size(); ++i) {
    printf("%3d x %5d %-5s", shapes[i].rows, shapes[i].hidden, shapes[i].res ? "res" : "plain");
    for (int k = 0; k < nk; ++k) {
      auto v = t[i * nk + k];
      std::sort(v.begin(), v.end());
      printf("  %5.2f (%4.2f-%4.2f)", v[v.size() / 2], v.front(), v.back());
    }
    printf("\n");
  }
  return 0;
}
