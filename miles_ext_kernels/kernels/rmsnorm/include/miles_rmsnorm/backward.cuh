// miles-ext-kernels first-party RMSNorm backward.
//   xhat = h * r, gw = g * w_eff, dx = r * (gw - xhat * mean(gw * xhat)) (+ g_h, residual form)
//   dw   = sum over rows of g * xhat (xhat rounded to the activation type under the
//          cast-before-weight-mul contract), FP32 result.
// Deterministic program: rows are split into n_chunks fixed chunks (a function of rows and
// hidden only); a chunk's partial is a sum of exact products accumulated in FP64 in row order,
// folded across the row groups of its CTA in fixed order; after a grid barrier the chunk
// partials are folded in FP64 in a fixed order per column and rounded once to FP32.
// Neither the CTA count nor the SM count changes any bit of dw.
#pragma once

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/device.cuh"

namespace miles_rmsnorm {

template <typename WT, int VPT>
__device__ __forceinline__ void load_effective_weight(const BackwardParams& p, int lane, int tpr,
                                                      float (&w)[VPT][8]) {
  const WT* __restrict__ wp = static_cast<const WT*>(p.w);
  const int64_t nv = p.hidden / 8;
  const bool zero_centered = (p.flags & kZeroCenteredGamma) != 0;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int64_t j = lane + static_cast<int64_t>(k) * tpr;
    if (j < nv) {
      load_weight8<WT>(wp + j * 8, w[k]);
      if (zero_centered) {
#pragma unroll
        for (int e = 0; e < 8; ++e) w[k][e] = 1.0f + w[k][e];
      }
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) w[k][e] = 0.0f;
    }
  }
}

// Shared memory of the deterministic program: the combine buffer (a whole row of doubles when a
// CTA holds several row groups, else one double per thread for the fold) and the weights.
__host__ __device__ inline int64_t combine_doubles(int64_t hidden, int groups, int block) {
  const int64_t row = groups > 1 ? hidden : 0;
  return row > block ? row : block;
}

// Double-buffered per-thread staging of the next rows' g and x vectors (cp.async).
__host__ __device__ inline int64_t stage_bytes(int vpt, int rows_per_group, int block) {
  return static_cast<int64_t>(2) * rows_per_group * 2 * vpt * block * 16;
}

inline size_t atomic_smem_bytes(int vpt, int rows_per_group, int block) {
  return static_cast<size_t>(stage_bytes(vpt, rows_per_group, block));
}

inline size_t deterministic_smem_bytes(int64_t hidden, int groups, int block, int vpt,
                                       int rows_per_group) {
  return static_cast<size_t>(stage_bytes(vpt, rows_per_group, block)) +
         static_cast<size_t>(combine_doubles(hidden, groups, block)) * sizeof(double) +
         static_cast<size_t>(hidden) * sizeof(float);
}

// Slots of the staging buffer: [buffer][row slot][g | x][vector][thread]; each thread reads
// back only what its own cp.async wrote, so waiting for its own copies is enough.
template <int VPT, int R>
struct RowStage {
  uint4* base;
  __device__ __forceinline__ uint4* slot(int buf, int i, int t, int k) const {
    return base + ((((buf * R + i) * 2 + t) * VPT + k) * static_cast<int>(blockDim.x) +
                   static_cast<int>(threadIdx.x));
  }
};

// Starts the copies of R rows' g and x vectors into buffer `buf`.
template <typename XT, int VPT, int R>
__device__ __forceinline__ void issue_rows(const BackwardParams& p, const int (&row)[R],
                                           const bool (&valid)[R], int lane, int tpr,
                                           const RowStage<VPT, R>& st, int buf) {
  const int64_t nv = p.hidden / 8;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!valid[i]) continue;
    const XT* gr = static_cast<const XT*>(p.g) + row_offset(row[i], p.heads, p.g_addr);
    const XT* xr = static_cast<const XT*>(p.x) + row_offset(row[i], p.heads, p.x_addr);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int64_t j = lane + static_cast<int64_t>(k) * tpr;
      if (j < nv) {
        cp_async16(st.slot(buf, i, 0, k), gr + j * 8);
        cp_async16(st.slot(buf, i, 1, k), xr + j * 8);
      }
    }
  }
  cp_async_commit();
}

// The R rows a group handles in the iteration starting at `base` (rows past `limit` masked).
template <int R>
__device__ __forceinline__ bool row_set(int base, int group, int groups, int limit, int (&row)[R],
                                        bool (&valid)[R]) {
  bool any = false;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    row[i] = base + group + i * groups;
    valid[i] = row[i] < limit;
    any |= valid[i];
  }
  return any;
}

// Waits for this thread's copies and moves buffer `buf` into registers (zeros elsewhere).
template <int VPT, int R>
__device__ __forceinline__ void take_rows(int64_t nv, const bool (&valid)[R], int lane, int tpr,
                                          const RowStage<VPT, R>& st, int buf,
                                          uint4 (&graw)[R][VPT], uint4 (&xraw)[R][VPT]) {
  cp_async_wait_all();
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int64_t j = lane + static_cast<int64_t>(k) * tpr;
      const bool live = valid[i] && j < nv;
      graw[i][k] = live ? *st.slot(buf, i, 0, k) : make_uint4(0u, 0u, 0u, 0u);
      xraw[i][k] = live ? *st.slot(buf, i, 1, k) : make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// Effective weights held in registers (atomic program) or in shared memory (deterministic
// program, whose FP64 accumulators need the registers).
template <int VPT>
struct RegisterWeights {
  float w[VPT][8];
  __device__ __forceinline__ float get(int k, int64_t /*j*/, int e) const { return w[k][e]; }
};

struct SharedWeights {
  const float* s;
  __device__ __forceinline__ float get(int /*k*/, int64_t j, int e) const { return s[j * 8 + e]; }
};

// Stores the effective weights (w, or 1 + w) of the whole row into shared memory.
template <typename WT>
__device__ __forceinline__ void stage_weights(const BackwardParams& p, float* w_s) {
  const WT* __restrict__ wp = static_cast<const WT*>(p.w);
  const bool zero_centered = (p.flags & kZeroCenteredGamma) != 0;
  for (int64_t j = threadIdx.x; j < p.hidden / 8; j += blockDim.x) {
    float v[8];
    load_weight8<WT>(wp + j * 8, v);
#pragma unroll
    for (int e = 0; e < 8; ++e) w_s[j * 8 + e] = zero_centered ? 1.0f + v[e] : v[e];
  }
  __syncthreads();
}

// R rows of the backward (one per slot, masked by `valid`): writes dx and adds g * xhat into
// acc in slot order, which is increasing row order. Every thread of the CTA calls it (the row
// reduction may synchronise).
template <typename XT, int VPT, int R, typename Weights, typename Acc>
__device__ __forceinline__ void backward_rows(const BackwardParams& p, const int (&row)[R],
                                              const bool (&valid)[R], int lane, int tpr,
                                              const Weights& w, RowScratch<R>& scratch,
                                              uint4 (&graw)[R][VPT], uint4 (&xraw)[R][VPT],
                                              Acc (&acc)[VPT][8]) {
  const int64_t nv = p.hidden / 8;
  const bool residual = (p.flags & kResidual) != 0;
  const bool cast = (p.flags & kCastBeforeWeightMul) != 0;
  float r[R];
  float dot[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    r[i] = valid[i] ? __ldg(p.rstd + row[i]) : 0.0f;
    dot[i] = 0.0f;
  }
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int64_t j = lane + static_cast<int64_t>(k) * tpr;
        if (j < nv) {
          dot[i] += (unpack<XT>(graw[i][k], e) * w.get(k, j, e)) * unpack<XT>(xraw[i][k], e);
        }
      }
    }
  }
  row_sums<R>(dot, tpr, scratch);
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      launder(graw[i][k]);
      launder(xraw[i][k]);
    }
  }
  const float hidden_f = static_cast<float>(p.hidden);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!valid[i]) continue;
    // mean(gw * xhat) = r * sum(gw * x) / H;  dx = r * gw - (r * r * mean) * x
    const float ri = r[i];
    const float m = ri * (dot[i] / hidden_f);
    const float b = (ri * ri) * m;
    const double scale = static_cast<double>(cast ? 1.0f : ri);
    XT* dxr = static_cast<XT*>(p.dx) + static_cast<int64_t>(row[i]) * p.hidden;
    const XT* ghr = residual
                        ? static_cast<const XT*>(p.g_h) + row_offset(row[i], p.heads, p.gh_addr)
                        : nullptr;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int64_t j = lane + static_cast<int64_t>(k) * tpr;
      if (j < nv) {
        float d[8];
        uint4 ghraw = make_uint4(0u, 0u, 0u, 0u);
        if (residual) ghraw = load_raw<XT>(ghr + j * 8);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const float gk = unpack<XT>(graw[i][k], e);
          const float xk = unpack<XT>(xraw[i][k], e);
          d[e] = __fmaf_rn(-b, xk, ri * (gk * w.get(k, j, e)));
          if (residual) d[e] += unpack<XT>(ghraw, e);
          // Exact products: g * x (scaled by r in FP64), or g * round(x * r).
          const float gx = cast ? gk * round_through<XT>(xk * ri) : gk * xk;
          accumulate(acc[k][e], gx, static_cast<Acc>(scale));
        }
        store8<XT>(dxr + j * 8, d);
      }
    }
  }
}

template <typename XT, typename WT, int VPT>
__global__ void __launch_bounds__(1024, 1) backward_deterministic_kernel(const BackwardParams p) {
  constexpr int R = backward_rows_per_group(VPT);
  __shared__ float scratch_mem[2 * R * 32];
  RowScratch<R> scratch{scratch_mem, 0};
  // Dynamic shared memory: row staging, FP64 combine/fold buffer, effective weights (see
  // deterministic_smem_bytes).
  extern __shared__ __align__(16) unsigned char smem[];
  const int tpr = p.tpr;
  const int rows_per_cta = blockDim.x / tpr;  // row groups
  const int group = threadIdx.x / tpr;
  const int lane = threadIdx.x - group * tpr;
  const int64_t nv = p.hidden / 8;
  const RowStage<VPT, R> stage{reinterpret_cast<uint4*>(smem)};
  unsigned char* after_stage = smem + stage_bytes(VPT, R, blockDim.x);
  double* combine = reinterpret_cast<double*>(after_stage);
  float* w_s = reinterpret_cast<float*>(
      after_stage + combine_doubles(p.hidden, rows_per_cta, blockDim.x) * sizeof(double));
  const SharedWeights w{w_s};
  const bool single_chunk = p.n_chunks == 1;

  const int rows = static_cast<int>(p.rows);
  const int rows_per_chunk = static_cast<int>(p.rows_per_chunk);
  for (int c = blockIdx.x; c < p.n_chunks; c += gridDim.x) {
    const int r0 = c * rows_per_chunk;
    const int r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
    double acc[VPT][8];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[k][e] = 0.0;
    }
    // Rows of the chunk, R per group per iteration; the next iteration's g and x are copied
    // into shared memory while this one computes.
    const int iter_rows = rows_per_cta * R;
    int row[R];
    bool valid[R];
    int buf = 0;
    row_set<R>(r0, group, rows_per_cta, r1, row, valid);
    issue_rows<XT, VPT, R>(p, row, valid, lane, tpr, stage, buf);
    // The weights are staged while the first rows are in flight (uniform: first chunk only).
    if (c == static_cast<int>(blockIdx.x)) stage_weights<WT>(p, w_s);
    for (int base = r0; base < r1; base += iter_rows) {
      uint4 graw[R][VPT];
      uint4 xraw[R][VPT];
      take_rows<VPT, R>(nv, valid, lane, tpr, stage, buf, graw, xraw);
      int next_row[R];
      bool next_valid[R];
      row_set<R>(base + iter_rows, group, rows_per_cta, r1, next_row, next_valid);
      issue_rows<XT, VPT, R>(p, next_row, next_valid, lane, tpr, stage, buf ^ 1);
      backward_rows<XT, VPT, R>(p, row, valid, lane, tpr, w, scratch, graw, xraw, acc);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        row[i] = next_row[i];
        valid[i] = next_valid[i];
      }
      buf ^= 1;
    }
    // Fold the row groups of this CTA in FP64, group 0 first (`combine` holds a whole row when
    // rows_per_cta > 1), then write the chunk's partial (or dw
    // itself, rounded once, when there is a single chunk).
    double* out_partial = p.partial + static_cast<int64_t>(c) * p.hidden;
    if (rows_per_cta == 1) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int64_t j = lane + static_cast<int64_t>(k) * tpr;
        if (j < nv) {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const double v = acc[k][e];
            if (single_chunk) {
              p.dw[j * 8 + e] = static_cast<float>(v);
            } else {
              out_partial[j * 8 + e] = v;
            }
          }
        }
      }
    } else {
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
        if (single_chunk) {
          p.dw[col] = static_cast<float>(combine[col]);
        } else {
          out_partial[col] = combine[col];
        }
      }
      __syncthreads();
    }
  }
  if (single_chunk) return;

  grid_barrier(p.counters);

  // Fixed-order FP64 fold of the chunk partials. The chunks of a column are split into
  // `segments` contiguous runs (a power of two chosen from n_chunks and the block size, i.e.
  // from rows and hidden only), each summed in chunk order; the runs are then summed in order
  // and the result is rounded once to FP32.
  double* seg_sums = combine;
  int segments = 1;
  while (segments * 2 <= static_cast<int>(blockDim.x / 32) &&
         static_cast<int64_t>(segments) * 2 * 8 <= p.n_chunks) {
    segments *= 2;
  }
  const int tile_width = blockDim.x / segments;
  const int seg = threadIdx.x / tile_width;
  const int col_in_tile = threadIdx.x - seg * tile_width;
  const int64_t per_seg = (p.n_chunks + segments - 1) / segments;
  const int64_t c_begin = seg * per_seg;
  const int64_t c_end = c_begin + per_seg < p.n_chunks ? c_begin + per_seg : p.n_chunks;
  const int64_t tiles = (p.hidden + tile_width - 1) / tile_width;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t col = tile * tile_width + col_in_tile;
    double s = 0.0;
    if (col < p.hidden) {
      const double* src = p.partial + col;
#pragma unroll 8
      for (int64_t c = c_begin; c < c_end; ++c) s += __ldcg(src + c * p.hidden);
    }
    if (segments == 1) {
      if (col < p.hidden) p.dw[col] = static_cast<float>(s);
      continue;
    }
    seg_sums[threadIdx.x] = s;
    __syncthreads();
    if (seg == 0 && col < p.hidden) {
      double t = 0.0;
      for (int i = 0; i < segments; ++i) t += seg_sums[i * tile_width + col_in_tile];
      p.dw[col] = static_cast<float>(t);
    }
    __syncthreads();
  }
}

// Non-deterministic program: FP32 accumulation per thread, atomics into a zeroed dw.
template <typename XT, typename WT, int VPT>
__global__ void __launch_bounds__(1024, 1) backward_atomic_kernel(const BackwardParams p) {
  constexpr int R = backward_rows_per_group(VPT);
  __shared__ float scratch_mem[2 * R * 32];
  RowScratch<R> scratch{scratch_mem, 0};
  extern __shared__ __align__(16) unsigned char smem[];  // row staging (atomic_smem_bytes)
  const int tpr = p.tpr;
  const int rows_per_cta = blockDim.x / tpr;
  const int group = threadIdx.x / tpr;
  const int lane = threadIdx.x - group * tpr;
  const int64_t nv = p.hidden / 8;
  const RowStage<VPT, R> stage{reinterpret_cast<uint4*>(smem)};
  RegisterWeights<VPT> w;
  load_effective_weight<WT, VPT>(p, lane, tpr, w.w);
  float acc[VPT][8];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[k][e] = 0.0f;
  }
  const int rows = static_cast<int>(p.rows);
  const int rows_per_iter = rows_per_cta * R;
  const int step = gridDim.x * rows_per_iter;
  int row[R];
  bool valid[R];
  int buf = 0;
  const bool any = row_set<R>(blockIdx.x * rows_per_iter, group, rows_per_cta, rows, row, valid);
  issue_rows<XT, VPT, R>(p, row, valid, lane, tpr, stage, buf);
  for (int base = blockIdx.x * rows_per_iter; base < rows; base += step) {
    uint4 graw[R][VPT];
    uint4 xraw[R][VPT];
    take_rows<VPT, R>(nv, valid, lane, tpr, stage, buf, graw, xraw);
    int next_row[R];
    bool next_valid[R];
    row_set<R>(base + step, group, rows_per_cta, rows, next_row, next_valid);
    issue_rows<XT, VPT, R>(p, next_row, next_valid, lane, tpr, stage, buf ^ 1);
    backward_rows<XT, VPT, R>(p, row, valid, lane, tpr, w, scratch, graw, xraw, acc);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      row[i] = next_row[i];
      valid[i] = next_valid[i];
    }
    buf ^= 1;
  }
  cp_async_wait_all();
  if (!any) return;
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
