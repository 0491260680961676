// miles-ext-kernels first-party RMSNorm backward.
//   xhat = h * r, gw = g * w_eff, dx = r * (gw - xhat * mean(gw * xhat)) (+ g_h, residual form)
//   dw   = sum over rows of g * xhat (xhat rounded to the activation type under the
//          cast-before-weight-mul contract), FP32 result.
// Deterministic program: rows are split into n_chunks fixed chunks (n_chunks a function of rows
// and hidden only; with one vector a thread, H <= 8192, rows dealt to the chunks in turn, else
// contiguous ranges: chunk_rows); a chunk's partial is a sum of exact products accumulated in
// FP64 in row order, folded across the row groups of its CTA in fixed order; after a grid barrier
// the chunk partials are folded in FP64 in a fixed order per column and rounded once to FP32.
// Neither the CTA count nor the SM count changes any bit of dw.
//
// Both programs stream rows through a ring of per-thread cp.async slots: while one iteration's
// rows are computed, the g and x of the next two (one at hidden > 8192) are already in flight;
// an iteration's rstd is loaded at its start and used after its row reduction.
#pragma once

#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

#include "miles_rmsnorm/cluster.cuh"
#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/device.cuh"
#include "miles_rmsnorm/launch.h"

namespace miles_rmsnorm {

// Iterations of rows in the cp.async ring: at most three with one vector per thread, two with
// four (three stages of four vectors would not fit in shared memory next to the weights). The
// launchers take the deepest ring whose shared memory the device allows a CTA (two or one on
// GPUs with 99 or 163 KB; one stage: each iteration waits for its own rows); the depth changes
// when rows arrive, not any arithmetic, so no bit of dx or dw.
__host__ __device__ constexpr int backward_stages(int vpt) { return vpt == 1 ? 3 : 2; }

// Bytes of a cp.async ring of `stages` stages: [stage][row slot][g | x][vector][thread] 16-byte
// slots.
__host__ __device__ inline int64_t stage_bytes(int vpt, int rows_per_group, int block,
                                               int stages) {
  return static_cast<int64_t>(stages) * rows_per_group * 2 * vpt * block * 16;
}

// The per-CTA shared memory the backward launchers plan against on `device`: its opt-in limit,
// or MILES_EXT_KERNELS_SMEM_LIMIT (bytes) where that is smaller (a test hook: it exercises the
// shallower rings of smaller GPUs on a large one).
inline cudaError_t backward_smem_limit(int device, size_t* limit) {
  int optin = 0;
  const cudaError_t status =
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (status != cudaSuccess) return status;
  *limit = static_cast<size_t>(optin);
  if (const char* cap = std::getenv("MILES_EXT_KERNELS_SMEM_LIMIT")) {
    const long long v = std::atoll(cap);
    if (v > 0 && static_cast<size_t>(v) < *limit) *limit = static_cast<size_t>(v);
  }
  return cudaSuccess;
}

// Whether the backward launchers may use clusters of more than 8 CTAs (the portable size) where
// the driver can place them: yes unless MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS is "0". Either way
// dx and dw keep their bits (the launchers fall back to shapes with the same arithmetic); the
// variable is a test hook and a way out on a device where the larger clusters misbehave.
inline bool nonportable_clusters_allowed() {
  const char* mode = std::getenv("MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS");
  return mode == nullptr || mode[0] != '0';
}

// Calls launch(std::integral_constant<int, D>{}, bytes(D), limit) with the deepest ring D
// (backward_stages(VPT), at most `max_stages`, down to 1) whose CTA needs at most the device's
// shared memory `limit` (backward_smem_limit); cudaErrorLaunchOutOfResources where not even one
// stage fits.
template <int VPT, typename Bytes, typename Launch>
inline cudaError_t launch_deepest_ring(int device, Bytes bytes, Launch launch,
                                       int max_stages = backward_stages(VPT)) {
  size_t limit = 0;
  const cudaError_t status = backward_smem_limit(device, &limit);
  if (status != cudaSuccess) return status;
  if constexpr (backward_stages(VPT) >= 3) {
    if (max_stages >= 3 && bytes(3) <= limit) {
      return launch(std::integral_constant<int, 3>{}, bytes(3), limit);
    }
  }
  if (bytes(2) <= limit) return launch(std::integral_constant<int, 2>{}, bytes(2), limit);
  if (bytes(1) <= limit) return launch(std::integral_constant<int, 1>{}, bytes(1), limit);
  return cudaErrorLaunchOutOfResources;
}

// Lets `kernel` launch with `smem` bytes of dynamic shared memory (an opt-in above 48 KB).
template <typename Kernel>
inline cudaError_t allow_dynamic_smem(Kernel kernel, size_t smem) {
  if (smem <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(smem));
}

// Whether the driver can place one cluster of `launch` (grid and cluster of `launch.config`) for
// `kernel` on `device`: asked once per device, kernel and launch shape (grid, block, dynamic shared
// memory) and remembered, since the answer does not change while the process runs. Past the
// portable size (8 CTAs) the kernel's non-portable attribute is set first. The callers have set
// the kernel's dynamic shared-memory attribute for this launch. Shared by the small-batch launcher
// and the one-cluster fold's, which used to ask the driver on every call.
template <typename Kernel>
inline cudaError_t cluster_placeable(Kernel kernel, const OneDimLaunch& launch, int device,
                                     bool* placeable) {
  struct Known {
    const void* kernel;
    int device;
    unsigned int grid;
    unsigned int block;
    size_t smem;
    bool placeable;
  };
  static std::mutex lock;
  static std::vector<Known> known;
  const auto* key = reinterpret_cast<const void*>(kernel);
  const cudaLaunchConfig_t& c = launch.config;
  {
    const std::lock_guard<std::mutex> guard(lock);
    for (const Known& k : known) {
      if (k.kernel == key && k.device == device && k.grid == c.gridDim.x &&
          k.block == c.blockDim.x && k.smem == c.dynamicSmemBytes) {
        *placeable = k.placeable;
        return cudaSuccess;
      }
    }
  }
  cudaError_t status = cudaSuccess;
  if (c.gridDim.x > 8) {
    status = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (status != cudaSuccess) return status;
  }
  int clusters = 0;
  status = cudaOccupancyMaxActiveClusters(&clusters, kernel, &c);
  if (status != cudaSuccess) return status;
  *placeable = clusters >= 1;
  const std::lock_guard<std::mutex> guard(lock);
  known.push_back({key, device, c.gridDim.x, c.blockDim.x, c.dynamicSmemBytes, *placeable});
  return cudaSuccess;
}

// FP64 combine/fold buffer of the deterministic program (aliases the ring once a chunk's rows
// are done): a row of doubles per row group when a CTA holds several, else one per thread.
// Several groups only where a group has at most 256 threads of one vector (hidden <= 2048), so
// groups * hidden <= 8 * block: 32 KB at 512 threads, no more than one stage of the ring.
__host__ __device__ inline int64_t combine_doubles(int64_t hidden, int groups, int block) {
  const int64_t rows = groups > 1 ? groups * hidden : 0;
  return rows > block ? rows : block;
}

inline size_t atomic_smem_bytes(int vpt, int rows_per_group, int block, int stages) {
  return static_cast<size_t>(stage_bytes(vpt, rows_per_group, block, stages));
}

inline size_t deterministic_smem_bytes(int64_t hidden, int groups, int block, int vpt,
                                       int rows_per_group, int stages) {
  const int64_t ring = stage_bytes(vpt, rows_per_group, block, stages);
  const int64_t combine = combine_doubles(hidden, groups, block) * 8;
  // The effective weights follow, as FP32: the FP64 accumulators need the registers.
  return static_cast<size_t>((ring > combine ? ring : combine) + hidden * 4);
}

// The one-cluster fold (cluster_fold_partials): at most this many chunks, one CTA each (16, the
// largest cluster sm_90 allows, with the non-portable size; the launcher asks the driver first).
// Above kClusterFoldWideHidden one fewer: at 32 x 4096 a cluster of 16 measured slower than the
// grid barrier on the H200 (7.21 against 6.88 us) while 15 at 30 x 4096 and 16 at 32 x 3072 were
// faster (7.01 against 7.66, 6.19 against 6.29).
constexpr int kMaxClusterFoldCtas = 16;
constexpr int64_t kClusterFoldWideHidden = 3072;

__host__ __device__ inline int max_cluster_fold_ctas(int64_t hidden) {
  return hidden > kClusterFoldWideHidden ? kMaxClusterFoldCtas - 1 : kMaxClusterFoldCtas;
}

// The kernels the fold is built into: one vector a thread with the three-stage ring, compiled for
// sm_90 (the host pass answers for the sm_90 build; the launcher checks the device). Elsewhere
// its code moved ptxas's register allocation of the row loop into spills — 8-16 bytes in
// sm_90a's shallower rings, 8 bytes in some sm_100a / sm_120 kernels — and it is not measured on
// those GPUs; they run the grid barrier.
__host__ __device__ constexpr bool cluster_fold_built(int vpt, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
  static_cast<void>(vpt);
  static_cast<void>(stages);
  return false;
#else
  return vpt == 1 && stages == 3;
#endif
}

// Whether this launch of a (VPT, D) kernel folds through its cluster (the launcher's flag).
template <int VPT, int D>
__device__ __forceinline__ bool uses_cluster_fold(const BackwardParams& p) {
  return cluster_fold_built(VPT, D) && (p.flags & kClusterFold) != 0;
}

// Positions of the partial a CTA of the one-cluster fold owns: `ctas` slices of an even count
// (two doubles travel as one 16-byte store), the last ones possibly short or empty.
__host__ __device__ inline int cluster_fold_slice(int hidden, int ctas) {
  const int per = (hidden + ctas - 1) / ctas;
  return (per + 1) & ~1;
}

__host__ __device__ inline int cluster_fold_count(int hidden, int ctas, int rank) {
  const int slice = cluster_fold_slice(hidden, ctas);
  const int begin = rank * slice;
  if (begin >= hidden) return 0;
  return hidden - begin < slice ? hidden - begin : slice;
}

// Shared memory the one-cluster fold adds after the weights: the CTA's own partial (hidden
// doubles), the slices it receives ([chunk][slice] doubles) and its mbarrier.
__host__ __device__ inline int64_t cluster_fold_bytes(int64_t hidden, int ctas) {
  return 8 * (hidden + static_cast<int64_t>(ctas) * cluster_fold_slice(static_cast<int>(hidden),
                                                                        ctas)) + 16;
}

template <int VPT, int R>
struct RowStage {
  uint4* base;
  // Each thread reads back only what its own cp.async wrote, so waiting for its own copies is
  // enough; a slot is rewritten the iteration after the thread last read it.
  __device__ __forceinline__ uint4* slot(int buf, int i, int t, int k) const {
    return base + ((((buf * R + i) * 2 + t) * VPT + k) * static_cast<int>(blockDim.x) +
                   static_cast<int>(threadIdx.x));
  }
};

// The R rows a group handles in the iteration starting at position `base` of a run of rows
// first, first + stride, first + 2 stride, ... (positions past `limit` masked): the deterministic
// program's chunk (first: the chunk, stride: n_chunks), or every row (0, 1: the atomic program).
// Row indices fit in 32 bits (the bindings refuse more than 2^30 rows).
template <int R>
struct RowSet {
  int row[R];
  bool valid[R];
  __device__ __forceinline__ RowSet(int base, int group, int groups, int limit, int first,
                                    int stride) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int position = base + group + i * groups;
      row[i] = first + position * stride;
      valid[i] = position < limit;
    }
  }
};

// Issues the rstd loads of an iteration's rows (used after the row reduction).
template <int R>
__device__ __forceinline__ void load_rstd(const BackwardParams& p, const RowSet<R>& s,
                                          float (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) r[i] = s.valid[i] ? __ldg(p.rstd + s.row[i]) : 0.0f;
}

// Starts the copies of a row set's g and x vectors into ring stage `buf` (one commit group,
// empty when no row is valid). PER_HEAD: rows are addressed as per-head views (p.heads != 1).
// KEEP: the copies carry an L2 evict_last policy (cp_async16_keep; backward_policy.h).
template <typename XT, int VPT, int R, bool PER_HEAD, bool KEEP>
__device__ __forceinline__ void issue_rows(const BackwardParams& p, const RowSet<R>& s, int lane,
                                           int tpr, const RowStage<VPT, R>& st, int buf) {
  const int nv = static_cast<int>(p.hidden / 8);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!s.valid[i]) continue;
    const XT* gr = static_cast<const XT*>(p.g) + row_offset(s.row[i], PER_HEAD, p.heads, p.g_addr);
    const XT* xr = static_cast<const XT*>(p.x) + row_offset(s.row[i], PER_HEAD, p.heads, p.x_addr);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int j = lane + k * tpr;
      if (j < nv) {
        cp_async16_as<KEEP>(st.slot(buf, i, 0, k), gr + j * 8);
        cp_async16_as<KEEP>(st.slot(buf, i, 1, k), xr + j * 8);
      }
    }
  }
  cp_async_commit();
}

// An iteration's g and x vectors, as the row code reads them (zeros for masked rows and
// vectors); the caller has waited for the ring stage's copies. Two sources:
// RegisterRows (fewer than four vectors per thread) moves the stage into registers once and
// keeps them packed across the row reduction; SharedRows (four vectors per thread, whose
// registers go to the FP64 accumulators) reads the stage where it lies, before and after it.
// A thread only reads the slots its own copies filled, and refills a stage only in a later
// iteration, so the stage is stable for the whole iteration.
template <int VPT, int R>
struct RegisterRows {
  uint4 g[R][VPT];
  uint4 x[R][VPT];
  uint4 gh[R][VPT];  // the residual form's g_h (fetch_gh)
  __device__ __forceinline__ RegisterRows(int nv, const bool (&valid)[R], int lane, int tpr,
                                          const RowStage<VPT, R>& st, int buf) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const bool live = valid[i] && lane + k * tpr < nv;
        g[i][k] = live ? *st.slot(buf, i, 0, k) : make_uint4(0u, 0u, 0u, 0u);
        x[i][k] = live ? *st.slot(buf, i, 1, k) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
  }
  __device__ __forceinline__ uint4 gv(int i, int k) const { return g[i][k]; }
  __device__ __forceinline__ uint4 xv(int i, int k) const { return x[i][k]; }
  // The residual form's g_h vectors of the iteration's rows, loaded before the row reduction so
  // that their round trips overlap it and each other (fetch_gh), and read where dx needs them.
  template <typename XT, bool PER_HEAD>
  __device__ __forceinline__ void fetch_gh(const BackwardParams& p, const RowSet<R>& s, int nv,
                                           int lane, int tpr) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const XT* ghr = static_cast<const XT*>(p.g_h) +
                      row_offset(s.row[i], PER_HEAD, p.heads, p.gh_addr);
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int j = lane + k * tpr;
        gh[i][k] = s.valid[i] && j < nv ? load_raw<XT>(ghr + j * 8) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
  }
  template <typename XT>
  __device__ __forceinline__ uint4 ghv(int i, int k, const XT* /*src*/) const {
    return gh[i][k];
  }
  // After the row reduction: hides the packed values from the optimiser, so that it re-widens
  // them instead of keeping widened floats alive across the reduction (register pressure).
  __device__ __forceinline__ void hold() {
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        launder(g[i][k]);
        launder(x[i][k]);
      }
    }
  }
};

template <int VPT, int R>
struct SharedRows {
  const RowStage<VPT, R>& st;
  int buf;
  const bool (&valid)[R];
  __device__ __forceinline__ SharedRows(int /*nv*/, const bool (&valid_rows)[R], int /*lane*/,
                                        int /*tpr*/, const RowStage<VPT, R>& stage, int b)
      : st(stage), buf(b), valid(valid_rows) {}
  // Callers read only vectors below the row end.
  __device__ __forceinline__ uint4 gv(int i, int k) const {
    return valid[i] ? *st.slot(buf, i, 0, k) : make_uint4(0u, 0u, 0u, 0u);
  }
  __device__ __forceinline__ uint4 xv(int i, int k) const {
    return valid[i] ? *st.slot(buf, i, 1, k) : make_uint4(0u, 0u, 0u, 0u);
  }
  // g_h is loaded where dx needs it: these kernels' registers hold 32 FP64 accumulators.
  template <typename XT, bool PER_HEAD>
  __device__ __forceinline__ void fetch_gh(const BackwardParams&, const RowSet<R>&, int, int,
                                           int) {}
  template <typename XT>
  __device__ __forceinline__ uint4 ghv(int /*i*/, int /*k*/, const XT* src) const {
    return load_raw<XT>(src);
  }
  __device__ __forceinline__ void hold() {}
};

template <int VPT, int R>
using BackwardRows = typename std::conditional<(VPT >= 4), SharedRows<VPT, R>,
                                               RegisterRows<VPT, R>>::type;

// Effective weights packed in registers (widened, and 1 + w applied, on use): the atomic and
// small-batch programs.
template <typename WT, int VPT>
struct RegisterWeights {
  RawWeight8<WT> w[VPT];
  bool zero_centered;
  // zero_centered_gamma: the call's kZeroCenteredGamma flag (a constant where the caller is
  // specialised on the contract).
  __device__ __forceinline__ void load(const BackwardParams& p, int lane, int tpr,
                                       bool zero_centered_gamma) {
    zero_centered = zero_centered_gamma;
    load_raw_weights<WT, VPT>(static_cast<const WT*>(p.w), p.hidden / 8, lane, tpr, w);
  }
  __device__ __forceinline__ float get(int k, int /*j*/, int e) const {
    return effective_weight(w[k].get(e), zero_centered);
  }
  __device__ __forceinline__ void hold() {
#pragma unroll
    for (int k = 0; k < VPT; ++k) w[k].hold();
  }
};

// Effective weights of the whole row in shared memory, as FP32: the deterministic program, whose
// FP64 accumulators need the registers.
// Layout: weights 4h .. 4h + 3 of vector j in float4 slot h * nv + j (h = 0, 1), so that a warp's
// loads of consecutive vectors are consecutive. Vector-major (a thread's eight floats 32 bytes
// from the next thread's) cost four times the shared-memory wavefronts (ncu, 16384 x 4096: a 4-
// to 7-way bank conflict on 65% of the shared loads). ptxas reads each float4 as two 8-byte
// halves, at twice the ideal wavefronts; four float2 planes (ideal) measured no faster and
// spilled the two-stage ring (docs/kernels.md step 30).
struct SharedWeights {
  float* s;  // 16-byte aligned
  int nv;    // vectors of a row
  // Two 16-byte loads per vector of eight weights (the compiler merges the per-element calls).
  __device__ __forceinline__ float get(int /*k*/, int j, int e) const {
    const float4 v = reinterpret_cast<const float4*>(s)[(e >> 2) * nv + j];
    return (e & 3) == 0 ? v.x : (e & 3) == 1 ? v.y : (e & 3) == 2 ? v.z : v.w;
  }
  // Starts the copies of the raw weights (as stored, vector j at 8 * sizeof(WT) * j bytes) into
  // `raw`, shared memory not otherwise used before the first iteration; one commit group.
  template <typename WT>
  __device__ __forceinline__ static void issue_raw(const BackwardParams& p, uint4* raw) {
    constexpr int kParts = static_cast<int>(sizeof(WT)) / 2;  // 16-byte parts of a vector
    const int nv = static_cast<int>(p.hidden / 8);
    const uint4* src = static_cast<const uint4*>(p.w);
    for (int j = threadIdx.x; j < nv; j += blockDim.x) {
#pragma unroll
      for (int h = 0; h < kParts; ++h) cp_async16(raw + j * kParts + h, src + j * kParts + h);
    }
    cp_async_commit();
  }
  // Stores w (or 1 + w) from the raw copies, once this thread's copy group is complete; every
  // thread of the CTA calls it.
  template <typename WT>
  __device__ __forceinline__ void stage_raw(const BackwardParams& p, const uint4* raw) const {
    constexpr int kParts = static_cast<int>(sizeof(WT)) / 2;
    const bool zero_centered = (p.flags & kZeroCenteredGamma) != 0;
    __syncthreads();  // every thread's copies have landed
    for (int j = threadIdx.x; j < nv; j += blockDim.x) {
      RawWeight8<WT> v;
      v.from_parts(raw + j * kParts);
      float f[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) f[e] = effective_weight(v.get(e), zero_centered);
      float4* s4 = reinterpret_cast<float4*>(s);
      s4[j] = make_float4(f[0], f[1], f[2], f[3]);
      s4[nv + j] = make_float4(f[4], f[5], f[6], f[7]);
    }
    __syncthreads();
  }
};

// One element's exact dw product, to be scaled by product_scale: g * x (scaled by r in FP64), or
// g * round(x * r) under the cast-before-weight-mul contract. dx_vector hands it on, and the
// small-batch program's column CTAs (backward_row_column.cuh) compute it again from the rows.
template <typename XT, bool CAST>
__device__ __forceinline__ float dw_product(float gk, float xk, float ri) {
  return CAST ? gk * round_through<XT>(xk * ri) : gk * xk;
}

// One vector's dx (eight elements) and its exact dw products, specialised on the contract so
// that no per-element select is left: dx = r * (g * w) - b * x (+ g_h), and add(e, product) with
// product g * x (to be scaled by r in FP64) or g * round(x * r) under the cast-before-weight-mul
// contract. Every program's dx and dw go through it (dx_row, the small-batch program's
// small_dx_rows), so they keep the same bits.
template <typename XT, bool CAST, bool RESIDUAL, typename Weights, typename Add>
__device__ __forceinline__ void dx_vector(uint4 graw, uint4 xraw, uint4 ghraw, float ri, float b,
                                          const Weights& w, int k, int j, float (&d)[8],
                                          Add add) {
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const float gk = widen<XT>(graw, e);
    const float xk = widen<XT>(xraw, e);
    d[e] = __fmaf_rn(-b, xk, ri * (gk * w.get(k, j, e)));
    if (RESIDUAL) d[e] += widen<XT>(ghraw, e);
    add(e, dw_product<XT, CAST>(gk, xk, ri));
  }
}

// The scale of dx_vector's products in acc: r, or 1 under the cast-before-weight-mul contract.
template <bool CAST, typename Acc>
__device__ __forceinline__ Acc product_scale(float ri) {
  return static_cast<Acc>(CAST ? 1.0f : ri);
}

// dx of one row (and its exact products added into acc), dx_vector for each of the thread's
// vectors.
template <typename XT, int VPT, bool CAST, bool RESIDUAL, typename Weights, typename Rows,
          typename Acc>
__device__ __forceinline__ void dx_row(XT* __restrict__ dxr, const XT* __restrict__ ghr, int nv,
                                       int lane, int tpr, float ri, float b, const Weights& w,
                                       const Rows& rows, int i, Acc (&acc)[VPT][8]) {
  const Acc scale = product_scale<CAST, Acc>(ri);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int j = lane + k * tpr;
    if (j < nv) {
      uint4 ghraw = make_uint4(0u, 0u, 0u, 0u);
      // RegisterRows holds g_h already (fetch_gh) and ignores the address, which the compiler
      // then drops (sm_90a SASS identical without it); SharedRows loads it here.
      if (RESIDUAL) ghraw = rows.template ghv<XT>(i, k, ghr + j * 8);
      const uint4 graw = rows.gv(i, k);
      const uint4 xraw = rows.xv(i, k);
      float d[8];
      dx_vector<XT, CAST, RESIDUAL>(graw, xraw, ghraw, ri, b, w, k, j, d,
                                    [&](int e, float product) {
                                      accumulate(acc[k][e], product, scale);
                                    });
      store8<XT>(dxr + j * 8, d);
    }
  }
}

// This thread's share of a row's sum(g * w_eff * x) over one vector, added to `dot` (the same
// expression in every program, so that a row's sum has the same bits in each).
template <typename XT, typename Weights>
__device__ __forceinline__ float vector_dot(float dot, uint4 graw, uint4 xraw, const Weights& w,
                                            int k, int j) {
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    dot = __fmaf_rn(widen<XT>(graw, e) * w.get(k, j, e), widen<XT>(xraw, e), dot);
  }
  return dot;
}

// The coefficient b of dx = r * gw - b * x for a row of rstd ri and sum(gw * x) = dot:
// mean(gw * xhat) = r * dot / H, b = r * r * mean.
__device__ __forceinline__ float dx_coefficient(float ri, float dot, float hidden_f) {
  const float m = ri * (dot / hidden_f);
  return (ri * ri) * m;
}

// dx_coefficient of the rows of one call, for the latency-bound kernels of a few rows (hidden <
// 2^24), with what depends on the hidden size alone formed before the row sum. Where H is a power
// of two, dot / H is dot * (1 / H): both are the exact quotient rounded once (a scaling by a power
// of two), so one multiply takes the place of the division's reciprocal, refinement and range
// check after the sum. 1 / 2^k is formed from the exponent: 2^k is (127 + k) << 23, 2^-k
// (127 - k) << 23. Same bits as dx_coefficient (docs/kernels.md step 88).
struct DxCoefficient {
  float hidden_f;
  float inv_hidden;  // 1 / H where pow2
  bool pow2;
  __device__ __forceinline__ static DxCoefficient of(int64_t hidden) {
    DxCoefficient c;
    c.hidden_f = static_cast<float>(static_cast<int>(hidden));
    c.inv_hidden = __int_as_float(0x7f000000 - __float_as_int(c.hidden_f));
    c.pow2 = (hidden & (hidden - 1)) == 0;
    return c;
  }
  __device__ __forceinline__ float operator()(float ri, float dot) const {
    if (pow2) {
      const float m = ri * (dot * inv_hidden);
      return (ri * ri) * m;
    }
    return dx_coefficient(ri, dot, hidden_f);
  }
};

// +0 from a loaded value v (zero_after) for a row sum to start from: the sum then waits for v's
// load, so ptxas issues that load with the row's instead of after they land (it did so with an
// rstd needed only after the sum: a second memory round trip before dx; docs/kernels.md step 88),
// as fixed_tie does for the forward's weights. rows: the call's row count (below 2^32).
__device__ __forceinline__ float zero_tied_to(float v, int64_t rows) {
  return __uint_as_float(zero_after(__float_as_uint(v), rows));
}

// Writes dx of row `i` of `rows` (and adds its exact products into acc), dispatching on the
// contract; `per_head` is p.heads != 1, `residual` the kResidual flag and `cast` the
// kCastBeforeWeightMul flag (constants where the caller is specialised on them).
template <typename XT, int VPT, typename Weights, typename Rows, typename Acc>
__device__ __forceinline__ void dx_row_for_flags(const BackwardParams& p, int row, int nv,
                                                 int lane, int tpr, float ri, float b,
                                                 const Weights& w, const Rows& rows, int i,
                                                 Acc (&acc)[VPT][8], bool per_head,
                                                 bool residual, bool cast) {
  XT* dxr = static_cast<XT*>(p.dx) + static_cast<int64_t>(row) * p.hidden;
  if (residual) {
    const XT* ghr = static_cast<const XT*>(p.g_h) +
                    row_offset(row, per_head, p.heads, p.gh_addr);
    if (cast) {
      dx_row<XT, VPT, true, true>(dxr, ghr, nv, lane, tpr, ri, b, w, rows, i, acc);
    } else {
      dx_row<XT, VPT, false, true>(dxr, ghr, nv, lane, tpr, ri, b, w, rows, i, acc);
    }
  } else if (cast) {
    dx_row<XT, VPT, true, false>(dxr, nullptr, nv, lane, tpr, ri, b, w, rows, i, acc);
  } else {
    dx_row<XT, VPT, false, false>(dxr, nullptr, nv, lane, tpr, ri, b, w, rows, i, acc);
  }
}

// One iteration's R rows (one per slot, masked by `valid`): writes dx and adds g * xhat into
// acc in slot order, which is increasing row order. Every thread of the CTA calls it (the row
// reduction may synchronise).
template <typename XT, int VPT, int R, bool PER_HEAD, int HIDDEN, typename Weights, typename Rows,
          typename Acc>
__device__ __forceinline__ void backward_rows(const BackwardParams& p, const RowSet<R>& s,
                                              const float (&r)[R], int lane, int tpr,
                                              const Weights& w, RowScratch<R>& scratch,
                                              Rows& rows, Acc (&acc)[VPT][8]) {
  const int nv = static_cast<int>(p.hidden / 8);
  float dot[R];
#pragma unroll
  for (int i = 0; i < R; ++i) dot[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int j = lane + k * tpr;
      if (j < nv) dot[i] = vector_dot<XT>(dot[i], rows.gv(i, k), rows.xv(i, k), w, k, j);
    }
  }
  if ((p.flags & kResidual) != 0) rows.template fetch_gh<XT, PER_HEAD>(p, s, nv, lane, tpr);
  row_sums<R, true>(dot, tpr, scratch);
  rows.hold();
  const float hidden_f = HIDDEN > 0 ? static_cast<float>(HIDDEN) : static_cast<float>(p.hidden);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!s.valid[i]) continue;
    const float b = dx_coefficient(r[i], dot[i], hidden_f);
    dx_row_for_flags<XT, VPT>(p, s.row[i], nv, lane, tpr, r[i], b, w, rows, i, acc, PER_HEAD,
                              (p.flags & kResidual) != 0,
                              (p.flags & kCastBeforeWeightMul) != 0);
  }
}

// Iterations over the positions first, first + step, ... below limit (R rows per group each) of
// the run of rows run_first + k * run_stride (RowSet), through a ring of D stages: g and x are
// copied D - 1 iterations ahead.
// `issued()` runs once the first D - 1 iterations' copies are issued, before the first iteration
// (the deterministic program stages its shared weights there, from copies started before any
// row's); `started()` runs in the first iteration, once its copies and its rstd load are in
// flight (the atomic program waits for its register weights there). Neither runs without rows.
// `pace(k)` runs at the start of every iteration k >= 1 (the deterministic program's GridPace).
// HIDDEN: the hidden size as a compile-time constant, or 0 (p.hidden).
// Every thread of the CTA calls this; it returns the number of iterations run.
template <typename XT, int VPT, int R, int D, bool PER_HEAD, bool KEEP, int HIDDEN,
          typename Weights, typename Acc, typename Issued, typename Started, typename Pace>
__device__ __forceinline__ int backward_row_loop(const BackwardParams& p, int first, int step,
                                                  int limit, int group, int groups, int lane,
                                                  int tpr, const RowStage<VPT, R>& stage,
                                                  const Weights& w, RowScratch<R>& scratch,
                                                  Acc (&acc)[VPT][8], Issued issued,
                                                  Started started, int run_first,
                                                  int run_stride, Pace pace) {
  static_assert(D >= 1, "a ring has at least one stage");
  const int nv = static_cast<int>(p.hidden / 8);
  // The rows of this group in the iteration at position `base`.
  auto rows_at = [&](int base) {
    return RowSet<R>(base, group, groups, limit, run_first, run_stride);
  };
  // Base of the iteration n ahead of `base`, clamped (every row of it masked) at the limit.
  auto ahead = [&](int base, int n) {
    const int64_t b = static_cast<int64_t>(base) + static_cast<int64_t>(n) * step;
    return b < limit ? static_cast<int>(b) : limit;
  };
#pragma unroll
  for (int d = 0; d < D - 1; ++d) {
    issue_rows<XT, VPT, R, PER_HEAD, KEEP>(p, rows_at(ahead(first, d)), lane, tpr, stage, d);
  }
  if (first < limit) issued();
  int buf = 0;
  int iteration = 0;
  for (int base = first; base < limit; base = ahead(base, 1), ++iteration) {
    if (iteration > 0) pace(iteration);
    // This iteration's rstd is loaded first: its latency overlaps the copies' wait, the dot
    // products and the row reduction (a value loaded earlier would have to wait in a register).
    const RowSet<R> s = rows_at(base);
    float r[R];
    load_rstd<R>(p, s, r);
    if (base == first) started();
    // Stage (buf + D - 1) mod D was read by this thread in the previous iteration.
    const int far = buf == 0 ? D - 1 : buf - 1;
    issue_rows<XT, VPT, R, PER_HEAD, KEEP>(p, rows_at(ahead(base, D - 1)), lane, tpr, stage,
                                           far);
    cp_async_wait_pending<D - 1>();
    BackwardRows<VPT, R> rows(nv, s.valid, lane, tpr, stage, buf);
    backward_rows<XT, VPT, R, PER_HEAD, HIDDEN>(p, s, r, lane, tpr, w, scratch, rows, acc);
    buf = buf == D - 1 ? 0 : buf + 1;
  }
  cp_async_wait_all();
  return iteration;
}

// A chunk's partial with one row group per CTA: a thread holds the eight columns of each of its
// vectors, stored element-major (element e of vector j at e * nv + j) so that a warp's store of
// one element covers consecutive addresses. Otherwise (written from shared memory in column
// order) position = column. 32-bit: hidden <= 16384.
__device__ __forceinline__ int partial_position(int j, int e, int nv, bool permuted) {
  return permuted ? e * nv + j : j * 8 + e;
}

// The column stored at `pos` of a partial.
__device__ __forceinline__ int partial_column(int pos, int nv, bool permuted) {
  return permuted ? (pos % nv) * 8 + pos / nv : pos;
}

// A chunk's FP64 sum for one column: its partial, or dw itself (rounded once) when the chunk is
// the only one.
__device__ __forceinline__ void write_chunk_sum(const BackwardParams& p, double* out_partial,
                                                int64_t col, int64_t pos, double v) {
  if (p.n_chunks == 1) {
    p.dw[col] = static_cast<float>(v);
  } else {
    out_partial[pos] = v;
  }
}

// Most chunks in a run of the fold (FoldRuns): a thread issues a run's loads together.
constexpr int kFoldRunChunks = 8;

// The runs a column's chunk partials are folded in (fold_partials, cluster_fold_partials): the
// fewest, a power of two, of at most kFoldRunChunks chunks each; each a contiguous range of
// chunks summed in chunk order (from +0.0), the run sums then added in a fixed binary tree (run
// 2i + 1 into run 2i, then 2i + 2 into 2i, ...: fold_partials). A function of n_chunks only
// (at most 64 runs of the at most 264 chunks), one definition for both folds, so that they give
// dw the same bits. (The fold measured in docs/kernels.md step 96 took its runs from the CTA's
// warps, at least 8 chunks each, and summed them in order.)
struct FoldRuns {
  int shift;    // log2 of the run count
  int count;    // runs
  int per_run;  // chunks a run (the last ones may be short or empty)
  int chunks;
  __device__ __forceinline__ explicit FoldRuns(int n_chunks) : shift(0), chunks(n_chunks) {
    while ((kFoldRunChunks << shift) < n_chunks) ++shift;
    count = 1 << shift;
    per_run = (n_chunks + count - 1) >> shift;
  }
  __device__ __forceinline__ int begin(int run) const { return run * per_run; }
  __device__ __forceinline__ int end(int run) const {
    return begin(run) + per_run < chunks ? begin(run) + per_run : chunks;
  }
};

// Fixed-order FP64 fold of the chunk partials into dw, after the grid barrier: FoldRuns' runs and
// tree, the result rounded once to FP32. A tile is `tile_width` positions (blockDim / runs, at
// least 4: a fold of more than 8 chunks runs in CTAs of at least 288 threads), its threads laid
// out [run][position], so a warp's loads of one chunk are consecutive; each thread issues its
// run's loads together (one round trip to L2 where the partials lie) and the tiles spread over
// the whole grid (H 2048, 264 chunks: 8 positions a tile, 256 tiles). The fold it replaced
// summed runs of 17 chunks in 64 CTAs, 2.2-2.8 us after the barrier at 16384 x 2048 on the
// H200 (docs/kernels.md step 96). `permuted`: the partials are element-major (partial_position);
// seg_sums: a double a thread of shared memory. Every thread of the CTA calls it.
// Not inlined, and given plain values rather than the parameter block (whose address would need
// a local copy): its registers are allocated apart from the row loop's, which cuts the spills
// ptxas left in the kernels with shallower rings and four vectors a thread (sm_80: the two-stage
// one-vector kernel 16 -> 0 bytes; sm_90a: the one-stage one 28 -> 0, the four-vector one-stage
// one 64 -> 20). 32-bit arithmetic: n_chunks <= rows <= 2^30 and hidden <= 16384.
inline __device__ __noinline__ void fold_partials(const double* __restrict__ partial,
                                                  float* __restrict__ dw, int n_chunks,
                                                  int hidden, double* seg_sums, bool permuted) {
  const int nv = hidden / 8;
  const FoldRuns runs(n_chunks);
  const int tile_width = static_cast<int>(blockDim.x) >> runs.shift;
  const int run = static_cast<int>(threadIdx.x) / tile_width;
  const int col_in_tile = static_cast<int>(threadIdx.x) - run * tile_width;
  const bool in_tile = run < runs.count;  // the threads past count * tile_width idle
  const int c_begin = runs.begin(run);
  const int c_end = runs.end(run);
  // Threads walk partial positions (coalesced reads); a position's column is where its sum goes.
  const int tiles = (hidden + tile_width - 1) / tile_width;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int pos = tile * tile_width + col_in_tile;
    const bool live = in_tile && pos < hidden;
    double v[kFoldRunChunks];
    const double* src = partial + pos;
#pragma unroll
    for (int k = 0; k < kFoldRunChunks; ++k) {
      const int c = c_begin + k;
      v[k] = live && c < c_end ? __ldcg(src + static_cast<int64_t>(c) * hidden) : 0.0;
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < kFoldRunChunks; ++k) {
      if (c_begin + k < c_end) s += v[k];
    }
    if (runs.count == 1) {
      if (live) dw[partial_column(pos, nv, permuted)] = static_cast<float>(s);
      continue;
    }
    if (in_tile) seg_sums[threadIdx.x] = s;
    __syncthreads();
    for (int width = 1; width < runs.count; width <<= 1) {
      if (in_tile && (run & (2 * width - 1)) == 0) {
        seg_sums[threadIdx.x] += seg_sums[threadIdx.x + width * tile_width];
      }
      __syncthreads();
    }
    if (run == 0 && live) {
      dw[partial_column(pos, nv, permuted)] = static_cast<float>(seg_sums[threadIdx.x]);
    }
    __syncthreads();
  }
}

// The one-cluster fold's buffers, after the weights (cluster_fold_bytes): the CTA's own partial
// (hidden doubles), the slices it receives ([chunk][slice]), its mbarrier.
struct ClusterFoldArea {
  double* mine;
  double* recv;
  uint32_t bar;
  __device__ __forceinline__ ClusterFoldArea(float* weights, int hidden, int ctas)
      : mine(reinterpret_cast<double*>(weights + hidden)),
        recv(mine + hidden),
        bar(shared_address(recv + ctas * cluster_fold_slice(hidden, ctas))) {}
};

// The one-cluster fold's start (sm_90 and later; every thread of the CTA calls it at entry): the
// CTA's mbarrier expects the bytes its slice of the partials will bring, and the cluster barrier
// that publishes it is arrived at now and waited on only before the first store to a peer, so
// its round trip overlaps the rows. Inlined: a call at entry keeps the kernel's live values in
// saved registers across it (ptxas spilled 8-16 bytes in the H200's kernels that way).
__device__ __forceinline__ void cluster_fold_begin(float* weights, int hidden, int ctas) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    const ClusterFoldArea area(weights, hidden, ctas);
    const int rank = static_cast<int>(blockIdx.x);
    barrier_init(area.bar, 1);
    barrier_init_fence();
    const int count = cluster_fold_count(hidden, ctas, rank);
    barrier_arrive_expect(area.bar, static_cast<uint32_t>(ctas * count * 8));
  }
  __syncthreads();
  cluster_arrive_relaxed();
#endif
}

// The fold when the grid is one cluster of one CTA a chunk (sm_90 and later; the launcher sets
// kClusterFold): CTA `rank`'s chunk partial is in its shared memory (`mine` of ClusterFoldArea,
// element-major). Each CTA owns slice `rank` of the positions (cluster_fold_slice): every CTA
// sends its values of slice o into CTA o's `recv` ([chunk][slice]) with st.async, each CTA waits
// on its own barrier, then sums its positions over the chunks in fold_partials' order (the same
// runs, the same additions) and rounds once: dw has the grid barrier's bits, without the
// workspace, the grid barrier and the partials' round trip through L2. No peer writes this
// CTA's shared memory once its barrier completed, so it may exit without a cluster barrier.
// Every thread calls it; not inlined, for the reason fold_partials is not.
inline __device__ __noinline__ void cluster_fold_partials(float* weights, float* __restrict__ dw,
                                                          int hidden, int ctas) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const ClusterFoldArea area(weights, hidden, ctas);
  const double* mine = area.mine;
  const double* recv = area.recv;
  const uint32_t bar = area.bar;
  const int rank = static_cast<int>(blockIdx.x);
  const int nv = hidden / 8;
  const int slice = cluster_fold_slice(hidden, ctas);
  __syncthreads();  // this CTA's partial is complete
  cluster_wait();   // every CTA's barrier is initialised
  const uint32_t column = shared_address(recv + rank * slice);  // this chunk's row of a slice
  for (int pos = 2 * static_cast<int>(threadIdx.x); pos < hidden;
       pos += 2 * static_cast<int>(blockDim.x)) {
    const int owner = pos / slice;
    const uint32_t at = column + static_cast<uint32_t>(pos - owner * slice) * 8u;
    store_remote(cluster_address(at, owner), mine[pos], mine[pos + 1],
                 cluster_address(bar, owner));
  }
  barrier_wait(bar, 0);
  const int begin = rank * slice;
  const int count = cluster_fold_count(hidden, ctas, rank);
  const FoldRuns runs(ctas);
  // At most two runs (kMaxClusterFoldCtas chunks): run 0 + run 1 is fold_partials' tree.
  static_assert(kMaxClusterFoldCtas <= 2 * kFoldRunChunks, "the cluster fold's runs are a pair");
  for (int q = static_cast<int>(threadIdx.x); q < count; q += static_cast<int>(blockDim.x)) {
    double t = 0.0;
    for (int run = 0; run < runs.count; ++run) {
      double s = 0.0;
      for (int c = runs.begin(run); c < runs.end(run); ++c) s += recv[c * slice + q];
      t = run == 0 ? s : t + s;
    }
    dw[partial_column(begin + q, nv, true)] = static_cast<float>(t);
  }
#endif
}

// A chunk's sums with one vector a thread: this thread's eight FP64 sums (a0..a7, columns
// 8 * lane .. 8 * lane + 7 of its row group) summed over the row groups of the CTA per column in
// group order, into the chunk's element-major partial (partial_position), or (partial ==
// nullptr: the only chunk) into dw, rounded once. With several groups, each group's sums go to
// its element-major row of `combine` first (a warp's stores of one element are consecutive; a
// thread's eight columns side by side would be 64 bytes from the next thread's, a 16-way bank
// conflict, and the groups used to take turns). Every thread of the CTA calls it, once it is
// done reading its ring slots (`combine` aliases the ring). Not inlined, with plain arguments,
// for the reason fold_partials is not.
inline __device__ __noinline__ void write_chunk_sums(double a0, double a1, double a2, double a3,
                                                     double a4, double a5, double a6, double a7,
                                                     double* combine, int group,
                                                     int groups, int lane, int hidden,
                                                     double* __restrict__ partial,
                                                     float* __restrict__ dw) {
  const int nv = hidden / 8;
  const double a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
  if (groups == 1) {
    if (lane < nv) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (partial != nullptr) {
          partial[partial_position(lane, e, nv, true)] = a[e];
        } else {
          dw[lane * 8 + e] = static_cast<float>(a[e]);
        }
      }
    }
    return;
  }
  __syncthreads();  // every thread is done reading its ring slots
  if (lane < nv) {
#pragma unroll
    for (int e = 0; e < 8; ++e) combine[group * hidden + partial_position(lane, e, nv, true)] = a[e];
  }
  __syncthreads();
  for (int pos = threadIdx.x; pos < hidden; pos += blockDim.x) {
    double v = combine[pos];
    for (int gi = 1; gi < groups; ++gi) v += combine[gi * hidden + pos];
    if (partial != nullptr) {
      partial[pos] = v;
    } else {
      dw[partial_column(pos, nv, true)] = static_cast<float>(v);
    }
  }
  __syncthreads();
}

// The rows of a deterministic chunk: first + k * stride for the positions k in [begin, end) (at
// most rows_per_chunk of them; none for a trailing chunk of the contiguous partition).
struct ChunkRows {
  int begin;
  int end;
  int first;
  int stride;
};

// Chunk c's rows, a function of (rows, hidden) only (VPT is the hidden size's). One vector a
// thread: dealt in turn, c, c + n_chunks, ... (ceil((rows - c) / n_chunks) rows: at least one,
// the routes giving n_chunks <= rows), so that the grid's CTAs stream neighbouring rows together,
// 2-8% faster than contiguous ranges at T >= 4096 on the H200 (docs/kernels.md, step 95). Four
// vectors a thread (one CTA an SM, H > 8192): the contiguous range [c * rows_per_chunk, ...),
// which measured faster there (16384 x 12288 by 9%).
template <int VPT>
__device__ __forceinline__ ChunkRows chunk_rows(const BackwardParams& p, int64_t c) {
  if constexpr (VPT == 1) {
    const int chunk = static_cast<int>(c);
    const int n_chunks = static_cast<int>(p.n_chunks);
    return {0, (static_cast<int>(p.rows) - chunk + n_chunks - 1) / n_chunks, chunk, n_chunks};
  } else {
    const int begin = static_cast<int>(c * p.rows_per_chunk);
    const int end = static_cast<int>(begin + p.rows_per_chunk < p.rows ? begin + p.rows_per_chunk
                                                                        : p.rows);
    return {begin, end, 0, 1};
  }
}

// Threads a row of the deterministic program: a constant for its compile-time hidden size
// (HIDDEN, one vector a thread), else the launch's.
template <int HIDDEN>
__device__ __forceinline__ int deterministic_row_width(const BackwardParams& p) {
  if constexpr (HIDDEN > 0) {
    constexpr int tpr = backward_fixed_tpr(HIDDEN);
    return tpr;
  } else {
    return p.tpr;
  }
}

// The deterministic program's work, once its weights are placed: the chunks of this CTA, a grid
// barrier, then this CTA's columns of the fixed-order fold.
template <typename XT, int VPT, int D, bool PER_HEAD, bool KEEP, int HIDDEN, bool PACE,
          typename Weights, typename Started>
__device__ __forceinline__ void deterministic_body(const BackwardParams& p, const Weights& w,
                                                   unsigned char* smem, Started stage_weights) {
  constexpr int R = backward_rows_per_group(VPT);
  __shared__ __align__(16) float scratch_mem[2 * R * 32];
  const int tpr = deterministic_row_width<HIDDEN>(p);
  const int rows_per_cta = blockDim.x / tpr;  // row groups
  const int group = threadIdx.x / tpr;
  const int lane = threadIdx.x - group * tpr;
  RowScratch<R> scratch = make_row_scratch<R>(scratch_mem, tpr, group);
  const int64_t nv = p.hidden / 8;
  const RowStage<VPT, R> stage{reinterpret_cast<uint4*>(smem)};
  double* combine = reinterpret_cast<double*>(smem);  // the ring, once a chunk's rows are done
  const bool single_chunk = p.n_chunks == 1;
  const int iteration_rows = rows_per_cta * R;
  // The most iterations of any chunk: the largest chunk's rows (the binding checks that
  // rows_per_chunk is ceil(rows / n_chunks), at most 2^30).
  const unsigned int most_iterations = static_cast<unsigned int>(
      (static_cast<int>(p.rows_per_chunk) + iteration_rows - 1) / iteration_rows);
  // The PACE instance paces its CTAs (GridPace; the host's rule is backward_policy.h's
  // backward_pace, and only the cooperative launch takes the instance, never the one-cluster
  // fold, whose CTAs skip GridBarrier::finish). The guard keeps a launch outside the rule
  // (several chunks a CTA, or one chunk) from waiting on iterations no running CTA will count.
  const GridPace pace{p.counters + 2, PACE && !single_chunk &&
                                          static_cast<int64_t>(gridDim.x) == p.n_chunks};

  for (int64_t c = blockIdx.x; c < p.n_chunks; c += gridDim.x) {
    const ChunkRows chunk = chunk_rows<VPT>(p, c);
    double acc[VPT][8];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[k][e] = 0.0;
    }
    const bool first_chunk = c == static_cast<int64_t>(blockIdx.x);
    const int iterations = backward_row_loop<XT, VPT, R, D, PER_HEAD, KEEP, HIDDEN>(
        p, chunk.begin, iteration_rows, chunk.end, group, rows_per_cta, lane, tpr, stage, w,
        scratch, acc, [&] { if (first_chunk) stage_weights(); }, [] {}, chunk.first,
        chunk.stride, [&](int k) { pace.step(k); });
    pace.finish(static_cast<unsigned int>(iterations), most_iterations);
    // Fold the row groups of this CTA in FP64, group 0 first, then write the chunk's partial
    // (or dw itself, rounded once, when there is a single chunk): write_chunk_sums with one
    // vector a thread. Four vectors a thread always make one group a CTA; their several-group
    // branch below is never taken, and stays because dropping it moved ptxas's register
    // allocation of those kernels (spills 12-20 -> 16-36 bytes on sm_90a).
    double* out_partial = p.partial + c * p.hidden;
    if constexpr (VPT == 1) {
      // One-cluster fold: the chunk's partial goes to this CTA's shared memory, after the weights
      // (cluster_fold_bytes), instead of the workspace.
      if (uses_cluster_fold<VPT, D>(p)) {
        out_partial = reinterpret_cast<double*>(w.s + p.hidden);
      }
      write_chunk_sums(acc[0][0], acc[0][1], acc[0][2], acc[0][3], acc[0][4], acc[0][5],
                       acc[0][6], acc[0][7], combine, group, rows_per_cta, lane,
                       static_cast<int>(p.hidden), single_chunk ? nullptr : out_partial, p.dw);
    } else if (rows_per_cta == 1) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int64_t j = lane + static_cast<int64_t>(k) * tpr;
        if (j < nv) {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const int pos =
                partial_position(static_cast<int>(j), e, static_cast<int>(nv), VPT == 1);
            write_chunk_sum(p, out_partial, j * 8 + e, pos, acc[k][e]);
          }
        }
      }
    } else {
      __syncthreads();  // every thread is done reading its ring slots
      for (int gi = 0; gi < rows_per_cta; ++gi) {
        if (group == gi) {
#pragma unroll
          for (int k = 0; k < VPT; ++k) {
            const int64_t j = lane + static_cast<int64_t>(k) * tpr;
            if (j < nv) {
#pragma unroll
              for (int e = 0; e < 8; ++e) {
                const double v = acc[k][e];
                combine[j * 8 + e] = gi == 0 ? v : combine[j * 8 + e] + v;
              }
            }
          }
        }
        __syncthreads();
      }
      for (int64_t col = threadIdx.x; col < p.hidden; col += blockDim.x) {
        write_chunk_sum(p, out_partial, col, col, combine[col]);
      }
      __syncthreads();
    }
  }
  if (single_chunk) return;
  if (uses_cluster_fold<VPT, D>(p)) {
    cluster_fold_partials(w.s, p.dw, static_cast<int>(p.hidden), static_cast<int>(p.n_chunks));
    return;
  }

  GridBarrier barrier{p.counters, false};
  barrier.sync();

  fold_partials(p.partial, p.dw, static_cast<int>(p.n_chunks), static_cast<int>(p.hidden),
                combine, VPT == 1);
  barrier.finish();
}

// PER_HEAD: the launch's rows are per-head views (p.heads != 1); a kernel of its own, so that the
// per-head addressing (a 64-bit division a row) is not in the plain kernel's row loop. KEEP: g and
// x copied with an L2 evict_last policy (backward_policy.h: backward_keep_rows; same bits), built
// for one vector a thread and contiguous rows only. HIDDEN (backward_fixed_hidden): the row loop
// with the row width and the hidden size as constants, for calls of exactly that hidden size
// (docs/kernels.md step 108), or 0. PACE (backward_pace): the CTAs paced (GridPace, step 107),
// an instance of its own so that the others' row loop has none of its instructions.
template <typename XT, typename WT, int VPT, int D, bool PER_HEAD, bool KEEP = false,
          int HIDDEN = 0, bool PACE = false>
__global__ void __launch_bounds__(backward_max_block(VPT), 1)
    backward_deterministic_kernel(const BackwardParams p) {
  static_assert(!KEEP || (VPT == 1 && !PER_HEAD),
                "the evict_last instance: one vector a thread, contiguous rows");
  static_assert(HIDDEN == 0 || (VPT == 1 && !PER_HEAD),
                "a compile-time hidden size: one vector a thread, contiguous rows");
  static_assert(!PACE || (VPT == 1 && !PER_HEAD),
                "the paced instance: one vector a thread, contiguous rows");
  // Dynamic shared memory: the cp.async ring (aliased by the FP64 combine/fold buffer), then the
  // effective weights (see deterministic_smem_bytes), then with the one-cluster fold its buffers
  // and mbarrier (cluster_fold_bytes).
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int R = backward_rows_per_group(VPT);
  const int64_t ring = stage_bytes(VPT, R, blockDim.x, D);
  const int tpr = deterministic_row_width<HIDDEN>(p);
  const int64_t combine = combine_doubles(p.hidden, blockDim.x / tpr, blockDim.x) * 8;
  const SharedWeights w{reinterpret_cast<float*>(smem + (ring > combine ? ring : combine)),
                        static_cast<int>(p.hidden / 8)};
  // The raw weights are copied before any row: into the ring's last stage, which the first
  // iteration is the first to fill, and staged as soon as the first rows' copies are issued.
  uint4* raw =
      reinterpret_cast<uint4*>(smem) + (D - 1) * R * 2 * VPT * static_cast<int>(blockDim.x);
  if (blockIdx.x < p.n_chunks) SharedWeights::issue_raw<WT>(p, raw);
  if (uses_cluster_fold<VPT, D>(p)) {
    cluster_fold_begin(w.s, static_cast<int>(p.hidden), static_cast<int>(p.n_chunks));
  }
  deterministic_body<XT, VPT, D, PER_HEAD, KEEP, HIDDEN, PACE>(p, w, smem, [&] {
    cp_async_wait_pending<D - 1>();  // the weights' group: committed before the rows'
    w.template stage_raw<WT>(p, raw);
  });
}

// Non-deterministic program: FP32 accumulation per thread, atomics into a zeroed dw.
template <typename XT, typename WT, int VPT, int D, bool PER_HEAD>
__global__ void __launch_bounds__(backward_max_block(VPT), 1)
    backward_atomic_kernel(const BackwardParams p) {
  constexpr int R = backward_rows_per_group(VPT);
  __shared__ __align__(16) float scratch_mem[2 * R * 32];
  extern __shared__ __align__(16) unsigned char smem[];  // the cp.async ring (atomic_smem_bytes)
  const int tpr = p.tpr;
  const int rows_per_cta = blockDim.x / tpr;
  const int group = threadIdx.x / tpr;
  const int lane = threadIdx.x - group * tpr;
  RowScratch<R> scratch = make_row_scratch<R>(scratch_mem, tpr, group);
  const int64_t nv = p.hidden / 8;
  const RowStage<VPT, R> stage{reinterpret_cast<uint4*>(smem)};
  RegisterWeights<WT, VPT> w;
  w.load(p, lane, tpr, (p.flags & kZeroCenteredGamma) != 0);
  float acc[VPT][8];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[k][e] = 0.0f;
  }
  // Row indices fit in 32 bits (at most 2^30 rows); a CTA whose first rows lie past the end
  // only joins the (uniform) barriers of the loop.
  const int rows = static_cast<int>(p.rows);
  const int64_t rows_per_iter = static_cast<int64_t>(rows_per_cta) * R;
  const int64_t first64 = blockIdx.x * rows_per_iter;
  const int first = first64 < rows ? static_cast<int>(first64) : rows;
  const int64_t step64 = gridDim.x * rows_per_iter;
  const int step = step64 < rows ? static_cast<int>(step64) : rows;
  backward_row_loop<XT, VPT, R, D, PER_HEAD, false, 0>(p, first, step, rows, group, rows_per_cta,
                                                    lane, tpr, stage, w, scratch, acc, [] {},
                                                    [&] { w.hold(); }, 0, 1, [](int) {});
  if (first >= rows) return;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int64_t j = lane + static_cast<int64_t>(k) * tpr;
    if (j < nv) {
#pragma unroll
      for (int e = 0; e < 8; ++e) atomicAdd(p.dw + j * 8 + e, acc[k][e]);
    }
  }
}

}  // namespace miles_rmsnorm
