// miles-ext-kernels first-party RMSNorm small-batch backward in row CTAs and column CTAs (the
// small-batch program: sm_90 and later).
//
// The cluster kernel (backward_small.cuh) splits each row's warps over a thread-block cluster,
// exchanges their partial sums through distributed shared memory, and has each CTA sum dw over
// its own columns; past one cluster's rows, the clusters' sums meet in a workspace. Once a call
// has a few rows, each row can have a CTA of its own. Here one grid runs two kinds of CTA, and
// nothing passes between them (no workspace):
// * column CTAs, first in the grid, sum dw in the cluster kernel's order (small_backward_shape's
//   row groups and cluster blocks: each row group's rows in row order from +0 in FP64, the groups
//   in order, the blocks in order, rounded once). So dw has the cluster kernel's bits, a function
//   of (rows, hidden) only. Either each column CTA owns a few vectors of every row, or (tall
//   calls, row_column_clusters) the column CTAs run in clusters of a CTA a cluster block, each
//   over its block's rows of the cluster's vectors, and the blocks' sums meet in distributed
//   shared memory (read by the CTAs that fold them, or, in the wide instance, pushed to them;
//   the wide instance also splits each vector over rc.split tasks up to H 512).
// * row CTAs hold whole rows, a row group of tpr threads each (one vector a thread), and reduce a
//   row within the CTA as the one-row kernel does (backward_one_row.cuh): the same first-level
//   warp butterflies, the same second-level butterfly over the warp partials, then dx_vector. So
//   dx has the cluster kernel's and the main program's bits.
// The launch shape is row_column_shape (config.h); where it runs, row_column_backward.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "miles_rmsnorm/backward_small.cuh"

namespace miles_rmsnorm {

// Whether the small-batch launcher runs a call in row and column CTAs: row_column_default, unless
// MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD is "0" (never) or "1" (every call of more than one row).
// Test hooks: the same bits either way.
inline bool row_column_backward(int64_t rows) {
  const char* mode = std::getenv("MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD");
  if (mode != nullptr && mode[0] == '0') return false;
  if (mode != nullptr && mode[0] == '1') return rows > 1;
  return row_column_default(rows);
}

// Whether a column task may address g and x with 32-bit element offsets (task_row_offsets):
// every element of the call's rows, (rows / heads - 1) * stride + (heads - 1) * head_stride +
// hidden - 1 at most, lies within 2^32 elements of the tensor's start. The launcher runs a call in
// row and column CTAs only then, else in the cluster kernel (the same bits); strides are never
// negative (the binding's checks).
inline bool column_offsets_fit(const BackwardParams& p) {
  constexpr uint64_t kLimit = 0xffffffffull;
  const bool per_head = p.heads != 1;
  const uint64_t heads = per_head ? static_cast<uint64_t>(p.heads) : 1u;
  const uint64_t tokens = (static_cast<uint64_t>(p.rows) + heads - 1) / heads;
  auto fits = [&](const RowAddress& a) {
    if (a.stride < 0 || a.head_stride < 0) return false;
    const auto stride = static_cast<uint64_t>(a.stride);
    const auto head_stride = per_head ? static_cast<uint64_t>(a.head_stride) : 0u;
    if (tokens > 1 && stride > kLimit / (tokens - 1)) return false;
    if (heads > 1 && head_stride > kLimit / (heads - 1)) return false;
    // Each term below is at most 2^32 - 1, so the sum cannot wrap.
    const uint64_t last = (tokens - 1) * stride + (heads - 1) * head_stride +
                          static_cast<uint64_t>(p.hidden) - 1;
    return last <= kLimit;
  };
  return fits(p.g_addr) && fits(p.x_addr);
}

// Whether the column CTAs run in clusters (row_column_shape): row_column_clusters_default, unless
// MILES_EXT_KERNELS_COLUMN_CLUSTERS is "0" (never) or "1" (wherever the call has several cluster
// blocks). Test hooks: the same bits either way.
inline bool row_column_clusters(const SmallBackwardShape& s, int64_t rows, int64_t hidden) {
  const char* mode = std::getenv("MILES_EXT_KERNELS_COLUMN_CLUSTERS");
  if (mode != nullptr && mode[0] == '0') return false;
  if (mode != nullptr && mode[0] == '1') return true;
  return row_column_clusters_default(s, rows, hidden);
}

// Whether the column clusters load kRowColumnWideBatch rows of a task at once:
// row_column_wide_batch, unless MILES_EXT_KERNELS_WIDE_BATCH is "0" (never; a probe and test hook:
// the same bits either way).
inline bool row_column_wide(const SmallBackwardShape& s, const RowColumnShape& rc) {
  const char* mode = std::getenv("MILES_EXT_KERNELS_WIDE_BATCH");
  if (mode != nullptr && mode[0] == '0') return false;
  return row_column_wide_batch(s, rc);
}

// dx of row `row` (none where `valid` is false) for thread j of its row group `group`: the one-
// row kernel's reduction, with the warp partials of the CTA's rows through `partials` (warp w at
// partials[w]) when a row has several warps. Every thread of the CTA calls it.
template <typename XT, typename WT, bool RESIDUAL>
__device__ __forceinline__ void row_cta_dx(const BackwardParams& p, const SmallBackwardShape& s,
                                           int row, bool valid, int group, int j,
                                           float* partials) {
  const int nv = static_cast<int>(p.hidden / 8);
  const bool live = j < nv;
  const int jj = live ? j : 0;  // a thread past the row's vectors reads vector 0, adds nothing
  const int at = valid ? row : 0;
  const bool per_head = p.heads != 1;
  RegisterWeights<WT, 1> w;
  w.load(p, j, s.tpr, (p.flags & kZeroCenteredGamma) != 0);
  const float r = __ldg(p.rstd + at);
  const uint4 graw = load_raw<XT>(static_cast<const XT*>(p.g) +
                                  row_offset(at, per_head, p.heads, p.g_addr) + jj * 8);
  const uint4 xraw = load_raw<XT>(static_cast<const XT*>(p.x) +
                                  row_offset(at, per_head, p.heads, p.x_addr) + jj * 8);
  uint4 ghraw = make_uint4(0u, 0u, 0u, 0u);
  if (RESIDUAL) {
    ghraw = load_raw<XT>(static_cast<const XT*>(p.g_h) +
                         row_offset(at, per_head, p.heads, p.gh_addr) + jj * 8);
  }
  w.hold();
  const DxCoefficient coefficient = DxCoefficient::of(p.hidden);
  // From +0 tied to the rstd, whose load then goes out with the row's (zero_tied_to). Summed on
  // every thread and selected, as in the one-row kernel (backward_one_row.cuh).
  const float own = vector_dot<XT>(zero_tied_to(r, p.rows), graw, xraw, w, 0, j);
  float dot[1] = {live ? own : 0.0f};
  lane_sums_once<1>(dot, s.tpr < 32 ? s.tpr : 32);
  if (s.row_warps > 1) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    if (lane == 0) partials[threadIdx.x >> 5] = dot[0];
    __syncthreads();
    float partial[1] = {lane < s.row_warps ? partials[group * s.row_warps + lane] : 0.0f};
    lane_sums_once<1>(partial, warp_partials_width(s.row_warps));
    dot[0] = __shfl_sync(0xffffffffu, partial[0], 0);
  }
  if (!valid || !live) return;
  const float b = coefficient(r, dot[0]);
  float d[8];
  auto no_dw = [](int, float) {};
  if ((p.flags & kCastBeforeWeightMul) != 0) {
    dx_vector<XT, true, RESIDUAL>(graw, xraw, ghraw, r, b, w, 0, j, d, no_dw);
  } else {
    dx_vector<XT, false, RESIDUAL>(graw, xraw, ghraw, r, b, w, 0, j, d, no_dw);
  }
  store8<XT>(static_cast<XT*>(p.dx) + static_cast<int64_t>(row) * p.hidden + j * 8, d);
}

// One task of a column CTA: row group `group` of cluster block `block`'s rows (rows [first,
// end)) at piece `piece` of the row (`live`: a piece of the row). A piece is a vector, or in the
// wide instance a part of one (kRowColumnWideSplit parts, TaskPiece). Task q: piece q % pieces of
// the CTA's, then the row groups, then the cluster blocks.
struct ColumnTask {
  int first;
  int end;
  int piece;
  bool live;
};

// Row group `group` of cluster block `block` at piece `piece` (column_task; a column cluster's
// CTA takes its cluster block from cluster_rank and its pieces' cluster from cluster_index,
// column_block_sums, with one division where column_task has three).
__device__ __forceinline__ ColumnTask task_at(const SmallBackwardShape& s, int block, int group,
                                              int piece, int rows, int row_pieces) {
  ColumnTask t;
  t.first = block * s.rows_per_cluster + group * s.rows_per_group;
  const int block_end = (block + 1) * s.rows_per_cluster < rows
                            ? (block + 1) * s.rows_per_cluster : rows;
  t.end = t.first + s.rows_per_group < block_end ? t.first + s.rows_per_group : block_end;
  t.piece = piece;
  t.live = piece < row_pieces;
  return t;
}

__device__ __forceinline__ ColumnTask column_task(const SmallBackwardShape& s, int first_piece,
                                                  int pieces, int q, int rows, int row_pieces) {
  const int rest = q / pieces;
  return task_at(s, rest / s.row_groups, rest % s.row_groups, first_piece + q % pieces, rows,
                 row_pieces);
}

// The registers of one piece of a row for a column task whose pieces are 8 / SPLIT elements of a
// 16-bit type: uint4 (a vector) or uint2 (half of one; four a vector measured slower, step 78).
template <int SPLIT>
struct TaskPiece;
template <>
struct TaskPiece<1> {
  using type = uint4;
};
template <>
struct TaskPiece<2> {
  using type = uint2;
};

// Elements of XT in a piece V.
template <typename XT, typename V>
constexpr int kPieceElements = static_cast<int>(sizeof(V) / sizeof(XT));

// A piece's words, padded with zeros to a vector's (widen reads its first elements).
template <typename V>
__device__ __forceinline__ uint4 piece_words(const V& v) {
  uint4 u = make_uint4(0u, 0u, 0u, 0u);
  memcpy(&u, &v, sizeof(V));
  return u;
}

// B rows of a task from row t.first + n0: g, x and rstd, all loads issued before any use (a vector
// past the row's reads vector 0). A row past the task's end holds zeros: its exact product is +0,
// and adding +0 to a sum from +0 keeps its bits (round to nearest gives -0 only for -0 + -0, so
// such a sum is never -0), where a select of every sum cost two instructions an element.
template <int B, typename V = uint4>
struct ColumnRows {
  V g[B];
  V x[B];
  float r[B];
};

// Every load of a batch out before any of its rows is used: ptxas otherwise spreads a wide batch's
// loads through the FP64 additions, each row's loads just before its own additions (the PTX has
// them first; sm_90a, a 12-row batch). The first row's rstd takes an OR with a value of every
// loaded word, masked by `zero` (0 at run time, which the compiler cannot see): the same bits, and
// no addition can start before the last load has returned.
template <int B, typename V>
__device__ __forceinline__ void hold_together(ColumnRows<B, V>& rows, uint32_t zero) {
  uint32_t all = 0;
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const uint4 g = piece_words(rows.g[i]);
    const uint4 x = piece_words(rows.x[i]);
    all ^= g.x ^ g.y ^ g.z ^ g.w ^ x.x ^ x.y ^ x.z ^ x.w ^ __float_as_uint(rows.r[i]);
  }
  rows.r[0] = __uint_as_float(__float_as_uint(rows.r[0]) | (all & zero));
}

// Rows t.first + n0 ... (B of them) of task t: their indices (row 0 for a row past the task's end)
// and the element offsets of the task's piece of them in g and x (`piece`: the piece's offset in a
// row), in 32 bits (column_offsets_fit: the launcher runs row and column CTAs only where every
// element of g and x fits; 64-bit offsets cost a column task about 25 instructions a row in front
// of its first loads, sm_90a). Per-head views walk (token, head) from the first row: one division
// a batch instead of one a row (each a chain of conversions and a reciprocal in front of the
// row's loads).
template <int B>
__device__ __forceinline__ void task_row_offsets(const BackwardParams& p, const ColumnTask& t,
                                                 int n0, bool per_head, uint32_t piece,
                                                 int (&at)[B], uint32_t (&og)[B],
                                                 uint32_t (&ox)[B]) {
  const int first = t.first + n0;
  const uint32_t g_stride = static_cast<uint32_t>(p.g_addr.stride);
  const uint32_t x_stride = static_cast<uint32_t>(p.x_addr.stride);
#pragma unroll
  for (int i = 0; i < B; ++i) at[i] = first + i < t.end ? first + i : 0;
  if (!per_head) {
#pragma unroll
    for (int i = 0; i < B; ++i) {
      og[i] = static_cast<uint32_t>(at[i]) * g_stride + piece;
      ox[i] = static_cast<uint32_t>(at[i]) * x_stride + piece;
    }
    return;
  }
  const uint32_t heads = static_cast<uint32_t>(p.heads);
  const uint32_t g_head_stride = static_cast<uint32_t>(p.g_addr.head_stride);
  const uint32_t x_head_stride = static_cast<uint32_t>(p.x_addr.head_stride);
  uint32_t token = static_cast<uint32_t>(first) / heads;
  uint32_t head = static_cast<uint32_t>(first) - token * heads;
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const bool valid = first + i < t.end;  // else row 0's piece
    og[i] = valid ? token * g_stride + (head * g_head_stride + piece) : piece;
    ox[i] = valid ? token * x_stride + (head * x_head_stride + piece) : piece;
    if (++head == heads) {
      head = 0;
      ++token;
    }
  }
}

template <typename XT, int B, typename V>
__device__ __forceinline__ void load_column_rows(const BackwardParams& p, const ColumnTask& t,
                                                 int n0, bool per_head, ColumnRows<B, V>& rows) {
  constexpr int kElements = kPieceElements<XT, V>;
  const uint32_t piece = static_cast<uint32_t>(t.live ? t.piece : 0) * kElements;
  int at[B];
  uint32_t og[B], ox[B];
  task_row_offsets<B>(p, t, n0, per_head, piece, at, og, ox);
#pragma unroll
  for (int i = 0; i < B; ++i) {
    rows.r[i] = __ldg(p.rstd + at[i]);
    rows.g[i] = __ldg(reinterpret_cast<const V*>(static_cast<const XT*>(p.g) + og[i]));
    rows.x[i] = __ldg(reinterpret_cast<const V*>(static_cast<const XT*>(p.x) + ox[i]));
  }
  if constexpr (B > kSmallBackwardBatch) hold_together(rows, static_cast<uint32_t>(p.rows >> 31));
#pragma unroll
  for (int i = 0; i < B; ++i) {
    if (t.first + n0 + i >= t.end) {  // read row 0 (its rstd may be infinite): zeros instead
      rows.g[i] = V{};
      rows.x[i] = V{};
      rows.r[i] = 0.0f;
    }
  }
}

// The exact products of B rows of a task added into acc in row order (one sum an element of the
// task's piece): dx_vector's products (dw_product) and FP64 additions (accumulate,
// product_scale), as the cluster kernel's dx pass adds them. A row of zeros (past the task's end)
// adds +0.
template <typename XT, int B, bool CAST, typename V, int E>
__device__ __forceinline__ void add_column_rows(const ColumnRows<B, V>& rows, double (&acc)[E]) {
  static_assert(E == kPieceElements<XT, V>, "one sum an element of the piece");
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const float ri = rows.r[i];
    const double scale = product_scale<CAST, double>(ri);
    const uint4 g = piece_words(rows.g[i]);
    const uint4 x = piece_words(rows.x[i]);
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float gk = widen<XT>(g, e);
      const float xk = widen<XT>(x, e);
      accumulate(acc[e], dw_product<XT, CAST>(gk, xk, ri), scale);
    }
  }
}

// Task t's sums: its rows in row order from +0 in FP64, loaded B at a time, into acc.
template <typename XT, int B, bool CAST>
__device__ __forceinline__ void task_row_sums(const BackwardParams& p, const SmallBackwardShape& s,
                                              const ColumnTask& t, double (&acc)[8]) {
#pragma unroll
  for (int e = 0; e < 8; ++e) acc[e] = 0.0;
  for (int n0 = 0; n0 < s.rows_per_group; n0 += B) {
    ColumnRows<B> rows;
    load_column_rows<XT, B>(p, t, n0, p.heads != 1, rows);
    add_column_rows<XT, B, CAST>(rows, acc);
  }
}

// Rows [n0, n0 + S) of task t copied into this thread's slots of `stage` with cp.async (row i's g
// at stage[i * kRowColumnMinBlock + thread], its x S * kRowColumnMinBlock further: a warp's
// pieces side by side), their rstd into r. A row past the task's end copies nothing (r: 0).
template <typename XT, int S, typename V>
__device__ __forceinline__ void stage_column_rows(const BackwardParams& p, const ColumnTask& t,
                                                  int n0, bool per_head, V* stage,
                                                  float (&r)[S]) {
  constexpr int kElements = kPieceElements<XT, V>;
  const uint32_t piece = static_cast<uint32_t>(t.live ? t.piece : 0) * kElements;
  int at[S];
  uint32_t og[S], ox[S];
  task_row_offsets<S>(p, t, n0, per_head, piece, at, og, ox);
  V* slots = stage + threadIdx.x;
#pragma unroll
  for (int i = 0; i < S; ++i) {
    const bool valid = t.first + n0 + i < t.end;
    r[i] = valid ? __ldg(p.rstd + at[i]) : 0.0f;
    if (valid) {
      cp_async_bytes<sizeof(V)>(slots + i * kRowColumnMinBlock,
                                static_cast<const XT*>(p.g) + og[i]);
      cp_async_bytes<sizeof(V)>(slots + (S + i) * kRowColumnMinBlock,
                                static_cast<const XT*>(p.x) + ox[i]);
    }
  }
  cp_async_commit();
}

// task_row_sums with one memory round trip for every B + S rows (the column clusters' wide
// instance, CTAs of at most kRowColumnMinBlock threads), over pieces V of E elements: rows
// [n0 + B, n0 + B + S) go to shared memory (stage_column_rows) as rows [n0, n0 + B) go to
// registers, and are added after them, each staged row only where the task has it (adding nothing
// is adding +0). The same additions in the same order, so the same sums. `stage`: 2 * S *
// kRowColumnMinBlock pieces.
template <typename XT, int B, int S, bool CAST, typename V, int E>
__device__ __forceinline__ void staged_task_row_sums(const BackwardParams& p,
                                                     const SmallBackwardShape& s,
                                                     const ColumnTask& t, V* stage,
                                                     double (&acc)[E]) {
  const bool per_head = p.heads != 1;
#pragma unroll
  for (int e = 0; e < E; ++e) acc[e] = 0.0;
  for (int n0 = 0; n0 < s.rows_per_group; n0 += B + S) {
    const bool staged = n0 + B < s.rows_per_group;
    float r[S];
    if (staged) stage_column_rows<XT, S>(p, t, n0 + B, per_head, stage, r);
    ColumnRows<B, V> rows;
    load_column_rows<XT, B>(p, t, n0, per_head, rows);
    add_column_rows<XT, B, CAST>(rows, acc);
    if (staged) {
      cp_async_wait_all();
      const V* slots = stage + threadIdx.x;
      ColumnRows<S, V> more;  // every staged slot read before the first test
#pragma unroll
      for (int i = 0; i < S; ++i) {
        more.g[i] = slots[i * kRowColumnMinBlock];
        more.x[i] = slots[(S + i) * kRowColumnMinBlock];
        more.r[i] = r[i];
      }
      hold_together(more, static_cast<uint32_t>(p.rows >> 31));
#pragma unroll
      for (int i = 0; i < S; ++i) {
        if (t.first + n0 + B + i < t.end) {
          ColumnRows<1, V> row;
          row.g[0] = more.g[i];
          row.x[0] = more.x[i];
          row.r[0] = more.r[i];
          add_column_rows<XT, 1, CAST>(row, acc);
        }
      }
      // No later copy into these slots before the reads above have their values.
      asm volatile("" ::: "memory");
    }
  }
}

// Position of element e of task q's sums in shared memory: eight doubles a task, the elements
// rotated so that a warp's stores of one element spread over the banks.
__device__ __forceinline__ int column_slot(int q, int e) { return q * 8 + (e ^ ((q >> 1) & 7)); }

// dw of `vectors` vectors from `first_vector` (column CTA): thread q's task sums its rows in row
// order from +0 (rows loaded B at a time), then each cluster block's row groups are added in
// order, then the blocks in order, rounded once: the cluster kernel's additions (its dx pass's
// acc, small_column_sums, fold_cluster_partials). `sums`: shared memory of kSmallBackwardMaxBlock
// * 8 doubles. Every thread of the CTA calls it.
template <typename XT, int B, bool CAST>
__device__ __forceinline__ void column_cta_dw(const BackwardParams& p, const SmallBackwardShape& s,
                                              int first_vector, int vectors, double* sums) {
  const int q = static_cast<int>(threadIdx.x);
  const int tasks = s.clusters * s.row_groups * vectors;  // at most blockDim.x (config.h)
  const int nv = static_cast<int>(p.hidden / 8);
  if (q < tasks) {
    const ColumnTask t = column_task(s, first_vector, vectors, q, static_cast<int>(p.rows), nv);
    double acc[8];
    task_row_sums<XT, B, CAST>(p, s, t, acc);
#pragma unroll
    for (int e = 0; e < 8; ++e) sums[column_slot(q, e)] = acc[e];
  }
  __syncthreads();
  // Each block's row groups in order, into its first group's slot (read by this thread only).
  const int block_tasks = s.clusters * vectors * 8;
  for (int k = q; k < block_tasks; k += static_cast<int>(blockDim.x)) {
    const int e = k & 7;
    const int v = (k >> 3) % vectors;
    const int base = (k >> 3) / vectors * s.row_groups * vectors + v;
    double sum = sums[column_slot(base, e)];
    for (int g = 1; g < s.row_groups; ++g) sum += sums[column_slot(base + g * vectors, e)];
    sums[column_slot(base, e)] = sum;
  }
  __syncthreads();
  // The blocks in cluster order, rounded once.
  for (int k = q; k < vectors * 8; k += static_cast<int>(blockDim.x)) {
    const int e = k & 7;
    const int v = k >> 3;
    const int vector = first_vector + v;
    if (vector < nv) {
      double sum = sums[column_slot(v, e)];
      for (int c = 1; c < s.clusters; ++c) {
        sum += sums[column_slot(c * s.row_groups * vectors + v, e)];
      }
      p.dw[static_cast<int64_t>(vector) * 8 + e] = static_cast<float>(sum);
    }
  }
}

// Task sums of a column cluster's CTA into `sums` (column_slot: a vector's eight sums where one
// task of its row group takes the whole vector), each block's row groups then added in order into
// the first group's slots (read by their thread only): block sums of the CTA's vectors at
// sums[column_slot(v, e)]. STAGED (the wide instance): staged_task_row_sums, each vector split
// over SPLIT tasks (rc.split: row_column_shape gives its CTAs that many times fewer vectors),
// each summing its part's elements; the same additions for each element. Every thread calls it.
template <typename XT, int B, bool CAST, bool STAGED, int SPLIT>
__device__ __forceinline__ void column_block_sums(const BackwardParams& p,
                                                  const SmallBackwardShape& s,
                                                  const RowColumnShape& rc, double* sums,
                                                  typename TaskPiece<SPLIT>::type* stage) {
  static_assert(STAGED || SPLIT == 1, "split tasks are the wide instance's");
  constexpr int kElements = 8 / SPLIT;
  // (Read from the parameters where used: held over the row loop they cost a spill.)
  const int vectors = rc.vectors;
  const int q = static_cast<int>(threadIdx.x);
  const int pieces = vectors * SPLIT;
  const int tasks = s.row_groups * pieces;  // at most blockDim.x (config.h)
  if (q < tasks) {
    // Row group q / pieces of the CTA's cluster block at piece q % pieces of its cluster's: task
    // cluster_rank() * tasks + q of column_task's order, decoded with one division instead of
    // three (each a chain of about 20 instructions in front of the task's first loads, sm_90a).
    const int group = q / pieces;
    const int piece = q - group * pieces;
    const ColumnTask t = task_at(s, static_cast<int>(cluster_rank()), group,
                                 static_cast<int>(cluster_index()) * pieces + piece,
                                 static_cast<int>(p.rows), static_cast<int>(p.hidden / kElements));
    double acc[kElements];
    if constexpr (STAGED) {
      staged_task_row_sums<XT, B, kRowColumnStagedRows, CAST>(p, s, t, stage, acc);
    } else {
      task_row_sums<XT, B, CAST>(p, s, t, acc);
    }
    // Part piece % SPLIT of the whole-vector task's sums (that task: q itself where SPLIT is 1).
    const int task = group * vectors + piece / SPLIT;
    const int part = piece % SPLIT;
#pragma unroll
    for (int e = 0; e < kElements; ++e) sums[column_slot(task, part * kElements + e)] = acc[e];
  }
  __syncthreads();
  for (int k = q; k < vectors * 8; k += static_cast<int>(blockDim.x)) {
    const int e = k & 7;
    const int v = k >> 3;
    double sum = sums[column_slot(v, e)];
    for (int g = 1; g < s.row_groups; ++g) sum += sums[column_slot(v + g * vectors, e)];
    sums[column_slot(v, e)] = sum;
  }
}

// dw of rc.vectors vectors of column cluster cluster_index() (blockIdx.x / rc.cluster) over the
// rows of cluster block k = cluster_rank() (CTA k of a column cluster of s.clusters CTAs): thread
// q's task (row group q / vectors at vector q % vectors) sums its rows in row order from +0, the
// block's row groups are added in order (column_block_sums), then the cluster's CTAs add the
// blocks' sums of their share of the outputs in cluster order from every CTA's shared memory,
// rounded once: the additions of column_cta_dw, each CTA reading its cluster block's rows only (in
// whole lines of a row where a cluster has 8 vectors or more). `sums`: shared memory of
// kSmallBackwardMaxBlock * 8 doubles. Every thread of the cluster calls it.
template <typename XT, int B, bool CAST>
__device__ __forceinline__ void column_cluster_dw(const BackwardParams& p,
                                                  const SmallBackwardShape& s,
                                                  const RowColumnShape& rc, double* sums) {
  column_block_sums<XT, B, CAST, false, 1>(p, s, rc, sums, nullptr);
  cluster_sync();
  // The blocks in cluster order, rounded once; the outputs spread over the cluster's CTAs.
  const int vectors = rc.vectors;
  const int q = static_cast<int>(threadIdx.x);
  const int nv = static_cast<int>(p.hidden / 8);
  const int stride = static_cast<int>(blockDim.x) * s.clusters;
  for (int k = static_cast<int>(cluster_rank() * blockDim.x) + q; k < vectors * 8; k += stride) {
    const int e = k & 7;
    const int v = k >> 3;
    const int vector = static_cast<int>(cluster_index()) * vectors + v;
    if (vector < nv) {
      const uint32_t local = shared_address(&sums[column_slot(v, e)]);
      double sum = load_remote_double(cluster_address(local, 0u));
      for (int c = 1; c < s.clusters; ++c) {
        sum += load_remote_double(cluster_address(local, static_cast<uint32_t>(c)));
      }
      p.dw[static_cast<int64_t>(vector) * 8 + e] = static_cast<float>(sum);
    }
  }
  // No CTA leaves while another reads its sums. Relaxed: the reads' values are in use, and the
  // arrival need not wait for the dw stores (a release arrival measured 0.2-0.25 us slower).
  cluster_arrive_relaxed();
  cluster_wait();
}

// Slots a wide column cluster's CTA receives its peers' block sums in: vector v of the cluster's
// is folded by CTA v % cluster, so a CTA folds at most ceil(vectors / cluster) vectors, eight
// sums of each block (row_column_wide_batch: vectors <= kRowColumnWideMaxVectors).
constexpr int kColumnClusterRecvSlots = (kRowColumnWideMaxVectors + kSmallMaxClusters - 1) * 8;

// column_cluster_dw for the wide instance (CTAs of at most kRowColumnMinBlock threads), its task
// rows staged (staged_task_row_sums) and its blocks' sums pushed instead of read: after the
// block's row groups are added, two sums a thread go with st.async into the shared memory of the
// CTA that folds their vector (vector v: CTA v % cluster; its block b's sums of the vector's jth
// at recv[(j * cluster + b) * 8 + e]), completing bytes of that CTA's barrier; each CTA waits for
// its own vectors' sums only, no cluster-wide memory barrier, no reads of another CTA's shared
// memory. The same additions. SPLIT: column tasks a vector (column_block_sums). `recv`:
// kColumnClusterRecvSlots doubles, `bar` an mbarrier, `stage` the staged rows' pieces.
template <typename XT, int B, bool CAST, int SPLIT>
__device__ __forceinline__ void wide_column_cluster_dw(const BackwardParams& p,
                                                       const SmallBackwardShape& s,
                                                       const RowColumnShape& rc, double* sums,
                                                       double* recv, uint64_t* bar,
                                                       typename TaskPiece<SPLIT>::type* stage) {
  const int cluster = rc.cluster;
  const int rank = static_cast<int>(cluster_rank());
  const int owned = rank < rc.vectors ? (rc.vectors - rank + cluster - 1) / cluster : 0;
  const uint32_t local_bar = shared_address(bar);
  if (threadIdx.x == 0) {
    barrier_init(local_bar, 1);
    barrier_init_fence();
    barrier_arrive_expect(local_bar, static_cast<uint32_t>(owned * cluster * 64));
  }
  cluster_arrive_relaxed();  // the barrier published before any peer's push; waited on below
  column_block_sums<XT, B, CAST, true, SPLIT>(p, s, rc, sums, stage);
  __syncthreads();
  cluster_wait();  // every peer's barrier is initialised
  const int q = static_cast<int>(threadIdx.x);
  for (int k = q; k < rc.vectors * 4; k += static_cast<int>(blockDim.x)) {
    const int v = k >> 2;
    const int e = (k & 3) * 2;
    const int owner = v % cluster;
    const uint32_t dst = cluster_address(
        shared_address(&recv[(v / cluster * cluster + rank) * 8 + e]), static_cast<uint32_t>(owner));
    store_remote(dst, sums[column_slot(v, e)], sums[column_slot(v, e + 1)],
                 cluster_address(local_bar, static_cast<uint32_t>(owner)));
  }
  barrier_wait(local_bar, 0);
  const int nv = static_cast<int>(p.hidden / 8);
  for (int k = q; k < owned * 8; k += static_cast<int>(blockDim.x)) {
    const int e = k & 7;
    const int j = k >> 3;
    const int vector = static_cast<int>(cluster_index()) * rc.vectors + j * cluster + rank;
    if (vector < nv) {
      const double* first = &recv[j * cluster * 8 + e];
      double sum = first[0];
      for (int b = 1; b < cluster; ++b) sum += first[b * 8];
      p.dw[static_cast<int64_t>(vector) * 8 + e] = static_cast<float>(sum);
    }
  }
}

// Column CTAs [0, rc.column_ctas) write dw of their vectors, the row CTAs after them dx of their
// rows (see the file comment): the column CTAs first, so that they start first (512 x 4096 12.02
// -> 8.48 us, 256 x 8192 12.13 -> 9.79, H200, cold L2: past one wave of CTAs the column CTAs
// waited for the row CTAs). CLUSTERED: column clusters of rc.cluster = s.clusters CTAs
// (column_cluster_dw), else each column CTA sums every row (column_cta_dw). `s`:
// small_backward_shape(rows, hidden), whose row groups and cluster blocks fix dw's order. B: the
// rows a column task loads at once (the cluster kernel's batch: the rows of a row group where it
// has one or two, else four). The contract is read from the flags; RESIDUAL: the kResidual flag.
// CTAs of up to 1024 threads (rows of H 4104-8192), two of 512 an SM: 64 registers a thread (a
// task of four-row batches spills 80 bytes); batches wider than kSmallBackwardBatch
// (row_column_wide_batch) run CTAs of at most kRowColumnMinBlock threads, four an SM. SPLIT: the
// wide instance's column tasks a vector (rc.split: its pieces, TaskPiece), 1 elsewhere.
template <typename XT, typename WT, int B, bool RESIDUAL, bool CLUSTERED, int SPLIT = 1>
__global__ void __launch_bounds__(B > kSmallBackwardBatch ? kRowColumnMinBlock : 1024,
                                  B > kSmallBackwardBatch ? 4 : 1)
    backward_row_column_kernel(const BackwardParams p, const SmallBackwardShape s,
                               const RowColumnShape rc) {
  constexpr bool kWide = B > kSmallBackwardBatch;  // CTAs of at most kRowColumnMinBlock threads
  // 45 KB in the wide instance (8 KB of task sums, 4.4 KB of peers' block sums, 32 KB of staged
  // rows), 32 KB in the others.
  __shared__ __align__(16) double sums[(kWide ? kRowColumnMinBlock : kSmallBackwardMaxBlock) * 8];
  __shared__ __align__(16) double recv[kWide ? kColumnClusterRecvSlots : 2];
  __shared__ typename TaskPiece<SPLIT>::type
      stage[kWide ? 2 * kRowColumnStagedRows * kRowColumnMinBlock : 1];
  __shared__ uint64_t bar;
  float* partials = reinterpret_cast<float*>(sums);  // the row CTAs' (no column work there)
  const int cta = static_cast<int>(blockIdx.x);
  if (cta >= rc.column_ctas) {
    const int group = static_cast<int>(threadIdx.x) / s.tpr;
    const int j = static_cast<int>(threadIdx.x) - group * s.tpr;
    const int row = (cta - rc.column_ctas) * rc.rows_per_cta + group;
    row_cta_dx<XT, WT, RESIDUAL>(p, s, row, row < p.rows, group, j, partials);
    return;
  }
  const bool cast = (p.flags & kCastBeforeWeightMul) != 0;
  if constexpr (CLUSTERED) {
    if constexpr (kWide) {
      if (cast) {
        wide_column_cluster_dw<XT, B, true, SPLIT>(p, s, rc, sums, recv, &bar, stage);
      } else {
        wide_column_cluster_dw<XT, B, false, SPLIT>(p, s, rc, sums, recv, &bar, stage);
      }
    } else if (cast) {
      column_cluster_dw<XT, B, true>(p, s, rc, sums);
    } else {
      column_cluster_dw<XT, B, false>(p, s, rc, sums);
    }
  } else {
    const int first_vector = cta * rc.vectors;
    if (cast) {
      column_cta_dw<XT, B, true>(p, s, first_vector, rc.vectors, sums);
    } else {
      column_cta_dw<XT, B, false>(p, s, first_vector, rc.vectors, sums);
    }
  }
}

}  // namespace miles_rmsnorm
