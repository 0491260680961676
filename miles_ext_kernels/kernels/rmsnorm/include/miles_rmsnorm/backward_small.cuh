// miles-ext-kernels first-party RMSNorm small-batch deterministic backward (sm_90 and later).
//
// The main deterministic program gives a row to one row group of one CTA: at a few rows a single
// SM issues every instruction of the call, and more rows add chunks, a grid barrier and a fold.
// Here a thread-block cluster runs a contiguous block of rows (the whole call while its CTAs each
// move at most 48 KB, else one of up to eight blocks): each CTA holds a column slice of every row
// of the block (the same threads, vectors and warp butterflies as the main program), the CTAs
// exchange their warp partials of each row through distributed shared memory and finish the row
// sum with the main program's second-level butterfly, so dx has the main program's bits. dw needs
// no grid barrier: a CTA owns its columns, each of its row groups sums a contiguous block of rows
// in row order in FP64, and the blocks are summed in order — rounded once, or with several
// clusters first folded in cluster order by the last CTA of each column slice to finish. A
// function of (rows, hidden) only (small_backward_shape), whichever cluster size the launcher
// could place.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "miles_rmsnorm/backward.cuh"
#include "miles_rmsnorm/cluster.cuh"

namespace miles_rmsnorm {

// Offsets of rows `at` in g, x and, where `residual`, g_h (else 0); the per-head test is taken
// once for the B rows (std::bool_constant: out of the loop). The cluster kernel's batches and the
// row and column CTAs' column tasks (backward_row_column.cuh).
template <int B>
__device__ __forceinline__ void batch_offsets(const BackwardParams& p, const int (&at)[B],
                                              bool per_head, bool residual, int64_t (&og)[B],
                                              int64_t (&ox)[B], int64_t (&oh)[B]) {
  auto offsets = [&](auto per_head_rows) {
#pragma unroll
    for (int i = 0; i < B; ++i) {
      og[i] = row_offset(at[i], per_head_rows.value, p.heads, p.g_addr);
      ox[i] = row_offset(at[i], per_head_rows.value, p.heads, p.x_addr);
      oh[i] = residual ? row_offset(at[i], per_head_rows.value, p.heads, p.gh_addr) : 0;
    }
  };
  if (per_head) {
    offsets(std::true_type{});
  } else {
    offsets(std::false_type{});
  }
}

// A batch of B rows of one thread read by dx_row: g and x vectors in registers; the residual
// form's g_h vectors in this thread's shared-memory slots (row i at gh[i * blockDim.x]), copied
// with the batch's loads so that their latency is not paid again, one row after another, when
// dx needs them (16 x 6144 with a residual: 7.0 us against 5.4 without, H200).
template <int B>
struct BatchRows {
  uint4 g[B];
  uint4 x[B];
  const uint4* gh;
  __device__ __forceinline__ uint4 gv(int i, int /*k*/) const { return g[i]; }
  __device__ __forceinline__ uint4 xv(int i, int /*k*/) const { return x[i]; }
  template <typename XT>
  __device__ __forceinline__ uint4 ghv(int i, int /*k*/, const XT* /*src*/) const {
    return gh[i * static_cast<int>(blockDim.x)];
  }
};

// This warp's partials of a batch's B rows to `dst` in another CTA: one st.async.
__device__ __forceinline__ void send_partials(uint32_t dst, const float (&dot)[4], uint32_t bar) {
  store_remote(dst, make_float4(dot[0], dot[1], dot[2], dot[3]), bar);
}
__device__ __forceinline__ void send_partials(uint32_t dst, const float (&dot)[2], uint32_t bar) {
  store_remote(dst, make_float2(dot[0], dot[1]), bar);
}
__device__ __forceinline__ void send_partials(uint32_t dst, const float (&dot)[1], uint32_t bar) {
  store_remote(dst, dot[0], bar);
}

// Sends this warp's first-level sums of a batch's B rows to every CTA of the cluster (itself
// included): lane c to CTA c, into `slot` ([warp of the row][batch row], local address) and its
// barrier `bar`. Warps past the row's warps send nothing.
template <int B>
__device__ __forceinline__ void send_batch(const float* slot, uint32_t bar,
                                           const SmallBackwardShape& s, int row_warp, int lane,
                                           const float (&dot)[B]) {
  if (row_warp < s.row_warps && lane < s.ctas) {
    const uint32_t dst = shared_address(slot + row_warp * B);
    send_partials(cluster_address(dst, static_cast<uint32_t>(lane)), dot,
                  cluster_address(bar, static_cast<uint32_t>(lane)));
  }
}

// A batch's B row sums from the warp partials received in `slot`: lane q holds warp q's partial
// of each row (zeros past the row's warps), then the main program's second-level butterfly
// (sum_warp_partials), the rows level by level; every lane ends with the sums. Warps past the
// row's warps (no vectors) leave `dot` as it is.
template <int B>
__device__ __forceinline__ void sum_received(const float* slot, const SmallBackwardShape& s,
                                             int row_warp, int lane, float (&dot)[B]) {
  if (row_warp < s.row_warps) {
    float partial[B];
#pragma unroll
    for (int i = 0; i < B; ++i) partial[i] = lane < s.row_warps ? slot[lane * B + i] : 0.0f;
    lane_sums_once<B>(partial, warp_partials_width(s.row_warps));
#pragma unroll
    for (int i = 0; i < B; ++i) dot[i] = __shfl_sync(0xffffffffu, partial[i], 0);
  }
}

// The FP64 sums of this CTA's columns over its cluster's rows, from its threads' row-block sums
// `acc` (each row group's, in row order): the row groups' sums are added in row-group order and
// handed to emit(column, sum). `block_sums` is shared memory of kSmallBackwardMaxBlock * 8
// doubles that no thread reads or writes any more. Every thread calls it.
// With several row groups, a group's sums are stored element-major (element e of thread t at
// e * slice + t), so that a warp's stores of one element are consecutive: a thread's eight
// columns side by side would be 64 bytes from the next thread's, a 16-way bank conflict. Thread
// t of group g then sums elements g, g + row_groups, ... of its own vector over the groups (no
// division). One group: the columns side by side, handed on in column order (coalesced dw
// stores; the conflict costs less than scattered stores there: 1 x 8192 4.4 against 4.7 us).
template <typename Emit>
__device__ __forceinline__ void small_column_sums(const BackwardParams& p,
                                                  const SmallBackwardShape& s,
                                                  const double (&acc)[8], double* block_sums,
                                                  int cta, int t, int group, int j, bool live,
                                                  Emit emit) {
  const int cols = s.slice * 8;
  if (s.row_groups == 1) {
#pragma unroll
    for (int e = 0; e < 8; ++e) block_sums[t * 8 + e] = acc[e];
    __syncthreads();
    for (int c = static_cast<int>(threadIdx.x); c < cols; c += static_cast<int>(blockDim.x)) {
      const int64_t col = static_cast<int64_t>(cta) * cols + c;
      if (col < p.hidden) emit(col, block_sums[c]);
    }
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) block_sums[group * cols + e * s.slice + t] = acc[e];
    __syncthreads();
    if (live) {
      for (int e = group; e < 8; e += s.row_groups) {
        const int pos = e * s.slice + t;
        double sum = block_sums[pos];
        for (int gi = 1; gi < s.row_groups; ++gi) sum += block_sums[gi * cols + pos];
        emit(static_cast<int64_t>(j) * 8 + e, sum);
      }
    }
  }
}

// dw of K columns, `col` and every blockDim.x-th after it below `end`, from the clusters' FP64
// partials [clusters][hidden]: added in cluster order and rounded once. Every load is issued
// before the first addition, one L2 round trip: the loop that loaded a cluster's partial after
// adding the previous one's took 0.9-1.2 us of a call of 4-8 clusters (64 x 4096, 64 x 8192;
// H200 stamps, docs/kernels.md step 52). A cluster past s.clusters adds +0, which changes no sum:
// no partial is -0 (every sum starts at +0, and +0 + -0 is +0). K: 1 where the CTA has a thread
// for every column of its slice, else kSmallFoldColumns (the same additions either way).
template <int K>
__device__ __forceinline__ void fold_cluster_partials(const BackwardParams& p,
                                                      const SmallBackwardShape& s, int64_t col,
                                                      int64_t end) {
  double part[K][kSmallMaxClusters];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t at = col + k * static_cast<int64_t>(blockDim.x);
#pragma unroll
    for (int c = 0; c < kSmallMaxClusters; ++c) {
      part[k][c] = at < end && c < s.clusters ? p.partial[c * p.hidden + at] : 0.0;
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t at = col + k * static_cast<int64_t>(blockDim.x);
    double sum = part[k][0];
#pragma unroll
    for (int c = 1; c < kSmallMaxClusters; ++c) sum += part[k][c];
    if (at < end) p.dw[at] = static_cast<float>(sum);
  }
}

// dw of this CTA's columns. One cluster: its column sums, rounded once. Several: each CTA stores
// its cluster's column sums in row `cluster` of the FP64 partials [clusters][hidden], then counts
// itself on its column slice's counter (one acquire-release atomic, after the CTA's barrier);
// the last CTA of a slice to arrive adds the clusters' sums in cluster order, rounds them once,
// and zeroes the counter for the next launch (or CUDA-graph replay). The order of additions is
// a function of (rows, hidden) only, whichever CTA arrives last.
// No peer writes this CTA's shared memory after its last batch (each sends a batch only after
// receiving this CTA's previous one), and this CTA's stores to the peers completed before their
// barriers let them go on: the CTA may exit without a cluster barrier. Every thread calls it.
template <bool MULTI>
__device__ __forceinline__ void write_small_dw(const BackwardParams& p,
                                               const SmallBackwardShape& s,
                                               const double (&acc)[8], double* block_sums,
                                               int cluster, int cta, int t, int group, int j,
                                               bool live) {
  if (!MULTI) {
    small_column_sums(p, s, acc, block_sums, cta, t, group, j, live,
                      [&](int64_t col, double sum) { p.dw[col] = static_cast<float>(sum); });
    return;
  }
  double* const mine = p.partial + static_cast<int64_t>(cluster) * p.hidden;
  small_column_sums(p, s, acc, block_sums, cta, t, group, j, live,
                    [&](int64_t col, double sum) { mine[col] = sum; });
  __shared__ unsigned int last;
  __syncthreads();  // the CTA's partial sums are stored (the release below covers them)
  if (threadIdx.x == 0) {
    last = fetch_add_acq_rel(p.counters + cta, 1u) == static_cast<unsigned int>(s.clusters - 1);
  }
  __syncthreads();
  if (!last) return;
  const int cols = s.slice * 8;
  const int64_t begin = static_cast<int64_t>(cta) * cols;
  const int64_t end = begin + cols < p.hidden ? begin + cols : p.hidden;
  if (end - begin <= static_cast<int64_t>(blockDim.x)) {
    if (begin + threadIdx.x < end) fold_cluster_partials<1>(p, s, begin + threadIdx.x, end);
  } else {
    for (int64_t col = begin + threadIdx.x; col < end; col += kSmallFoldColumns * blockDim.x) {
      fold_cluster_partials<kSmallFoldColumns>(p, s, col, end);
    }
  }
  if (threadIdx.x == 0) p.counters[cta] = 0u;
}

// dx of a batch's B rows and their exact products added into acc in row order: dx_vector for
// each slot, without a branch. Every slot's arithmetic runs; a slot past the group's end keeps
// acc as it was (a select, not an added zero: its row-0 stand-in's rstd may be infinite) and,
// like a thread past the row's vectors, stores nothing. dx_row_for_flags' per-row
// branch (a slot past the end, a thread past the vectors, the contract) costs a one-cluster call
// of one- and two-row batches 0.05-0.15 us (T = 1 1.4-4%, 16 x 4096 3-4%, H200); batches of four
// keep it (without it, 64 x 6144 and 64 x 8192 measured 1.5-2.6% slower), as do calls of several
// clusters (64 x 4096 up to 1% slower without it). docs/kernels.md step 51.
template <typename XT, int B, bool CAST, bool RESIDUAL, typename Weights>
__device__ __forceinline__ void small_dx_rows(const BackwardParams& p, const int (&row)[B],
                                              const bool (&valid)[B], const float (&r)[B],
                                              const float (&dot)[B], float hidden_f, int j,
                                              bool live, const Weights& w,
                                              const BatchRows<B>& batch, double (&acc)[8]) {
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const float b = dx_coefficient(r[i], dot[i], hidden_f);
    const double scale = product_scale<CAST, double>(r[i]);
    uint4 ghraw = make_uint4(0u, 0u, 0u, 0u);
    if (RESIDUAL) ghraw = batch.template ghv<XT>(i, 0, static_cast<const XT*>(nullptr));
    float d[8];
    dx_vector<XT, CAST, RESIDUAL>(batch.g[i], batch.x[i], ghraw, r[i], b, w, 0, j, d,
                                  [&](int e, float product) {
                                    double sum = acc[e];
                                    accumulate(sum, product, scale);
                                    acc[e] = valid[i] ? sum : acc[e];
                                  });
    if (valid[i] && live) {
      store8<XT>(static_cast<XT*>(p.dx) + static_cast<int64_t>(row[i]) * p.hidden + j * 8, d);
    }
  }
}

// B rows a batch: 4, or the rows of a row group where it has one or two, so that a call of a few
// rows neither reduces nor exchanges empty rows. The same arithmetic a row either way: the same
// dx and dw bits. RESIDUAL: the call's kResidual flag (the g_h staging is compiled into the
// residual kernels only). MULTI: the call runs several clusters (s.clusters > 1; the row blocks
// and the fold are compiled into those kernels only: one cluster measured 0.05-0.25 us slower
// with them, H200). CONTRACT: the call's kCastBeforeWeightMul | kZeroCenteredGamma bits, fixed at
// compile time, or kRuntimeContract (read from the flags): the kernels of full batches (B = 4)
// hold one contract's code each, no branch on the cast and no select on 1 + w (0.1-0.25 us of a
// T = 16 call, docs/kernels.md step 43); the kernels of one- and two-row batches keep the flags.
constexpr int kRuntimeContract = -1;
constexpr int kContractMask = kCastBeforeWeightMul | kZeroCenteredGamma;

template <typename XT, typename WT, int B, bool RESIDUAL, bool MULTI, int CONTRACT>
__global__ void __launch_bounds__(kSmallBackwardMaxBlock, 1)
    backward_small_kernel(const BackwardParams p, const SmallBackwardShape s) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // clusters need sm_90; the package builds this program for sm_90 and later only
#else
  namespace cg = cooperative_groups;
  static_assert(B == 1 || B == 2 || B == kSmallBackwardBatch,
                "a batch's warp partials travel as one store");
  constexpr int kWarps = kSmallBackwardMaxBlock / 32;
  // Row groups x warps of a row: at most 128, the row partition being the portable shape's (its
  // row groups times its CTAs' warps of a row fit 16 warps a CTA times 8 CTAs).
  constexpr int kRowWarps = kSmallBackwardPortableCtas * kWarps;
  // [row group][slice column] FP64 sums (the fold), and the warp partials of the rows of a batch
  // received from the cluster: [phase][row group][warp of the row][batch row], double-buffered
  // with one barrier each (a peer sends batch k + 2 only after it has received this CTA's
  // batch k + 1, which this CTA sends after reading batch k).
  __shared__ double block_sums[kSmallBackwardMaxBlock * 8];
  __shared__ __align__(16) float received[2][kRowWarps][B];
  __shared__ __align__(8) uint64_t barriers[2];
  // The residual form's g_h slots (BatchRows) alias block_sums, which is written only after the
  // last batch (behind a barrier).
  static_assert(B * kSmallBackwardMaxBlock * sizeof(uint4) <= sizeof(block_sums),
                "the g_h slots fit in block_sums");
  uint4* const gh_slots = reinterpret_cast<uint4*>(block_sums);
  const int cta = static_cast<int>(cg::this_cluster().block_rank());
  const bool exchange = s.row_warps > 1;
  const int group = static_cast<int>(threadIdx.x) / s.slice;
  const int t = static_cast<int>(threadIdx.x) - group * s.slice;
  const int j = cta * s.slice + t;  // this thread's vector of a row: the main program's lane
  const int nv = static_cast<int>(p.hidden / 8);
  const bool live = j < nv;
  // This cluster's block of rows, and this row group's rows of it.
  const int cluster = MULTI ? static_cast<int>(cluster_index()) : 0;
  const int rows = static_cast<int>(p.rows);
  const int block_end =
      MULTI && (cluster + 1) * s.rows_per_cluster < rows ? (cluster + 1) * s.rows_per_cluster
                                                         : rows;
  const int rows_per_group = s.rows_per_group;
  const int first = cluster * s.rows_per_cluster + group * rows_per_group;
  const int end = first + rows_per_group < block_end ? first + rows_per_group : block_end;
  const bool per_head = p.heads != 1;
  constexpr bool residual = RESIDUAL;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  // This warp is warp `row_warp` of its row group's rows (past the row's warps: no vectors).
  const int row_warp = cta * s.slice_warps + (t >> 5);
  const float hidden_f = static_cast<float>(p.hidden);
  const uint32_t batch_bytes = static_cast<uint32_t>(s.row_groups * s.row_warps * B * 4);

  // The weights and the first batch's rows are loaded before the barriers are set up (their
  // latency covers it); later batches at the top of their iteration.
  const int contract = CONTRACT == kRuntimeContract ? p.flags : CONTRACT;
  const bool cast = (contract & kCastBeforeWeightMul) != 0;
  RegisterWeights<WT, 1> w;
  w.load(p, j, s.tpr, (contract & kZeroCenteredGamma) != 0);
  int row[B];
  bool valid[B];
  float r[B];
  BatchRows<B> batch;
  batch.gh = gh_slots + threadIdx.x;
  // Branch-free: every thread loads every row of the batch, a row past the group's end as row 0
  // and a thread past the row's vectors vector 0; the per-head test is taken once a batch. Those
  // values are not masked here (a select would wait for the loads before the barriers are set
  // up): a thread past the row's vectors adds no dot (`live` below), and a row past the end has
  // its sum exchanged but no dx and no dw (`valid`). With a branch around each row's loads,
  // ptxas issued the rows one after another, each behind its own address chain: issuing a batch
  // of four took 0.6-0.8 us, now 0.3 (H200 stamps, docs/kernels.md step 50).
  auto load_batch = [&](int base) {
    const int jj = live ? j : 0;
    int at[B];  // the row each slot reads
    int64_t og[B], ox[B], oh[B];
#pragma unroll
    for (int i = 0; i < B; ++i) {
      row[i] = base + i;
      valid[i] = row[i] < end;
      at[i] = valid[i] ? row[i] : 0;
    }
    batch_offsets<B>(p, at, per_head, residual, og, ox, oh);
#pragma unroll
    for (int i = 0; i < B; ++i) {
      r[i] = __ldg(p.rstd + at[i]);
      batch.g[i] = load_raw<XT>(static_cast<const XT*>(p.g) + og[i] + jj * 8);
      batch.x[i] = load_raw<XT>(static_cast<const XT*>(p.x) + ox[i] + jj * 8);
      if (residual) {
        cp_async16(gh_slots + i * static_cast<int>(blockDim.x) + threadIdx.x,
                   static_cast<const XT*>(p.g_h) + oh[i] + jj * 8);
      }
    }
    if (residual) cp_async_commit();
  };
  load_batch(first);
  if (exchange) {
    if (threadIdx.x == 0) {
      barrier_init(shared_address(&barriers[0]), 1);
      barrier_init(shared_address(&barriers[1]), 1);
      barrier_init_fence();
    }
    __syncthreads();
    cluster_arrive_relaxed();  // waited on before the first store to a peer
  }
  double acc[1][8];
#pragma unroll
  for (int e = 0; e < 8; ++e) acc[0][e] = 0.0;

  int batch_index = 0;
  // Every thread runs the same number of batches; rows past `end` are masked.
  for (int base = first; base < first + rows_per_group; base += B, ++batch_index) {
    if (batch_index > 0) load_batch(base);
    w.hold();
    float dot[B];
#pragma unroll
    for (int i = 0; i < B; ++i) {
      dot[i] = live ? vector_dot<XT>(0.0f, batch.g[i], batch.x[i], w, 0, j) : 0.0f;
    }
    // The main program's first-level butterflies (lane_sum_once), the batch's rows level by level.
    lane_sums_once<B>(dot, s.tpr < 32 ? s.tpr : 32);
    if (exchange) {
      const int phase = batch_index & 1;
      const uint32_t bar = shared_address(&barriers[phase]);
      if (threadIdx.x == 0) barrier_arrive_expect(bar, batch_bytes);
      if (batch_index == 0) cluster_wait();  // every peer's barriers are initialised
      float* slot = &received[phase][group * s.row_warps][0];
      send_batch<B>(slot, bar, s, row_warp, lane, dot);
      barrier_wait(bar, static_cast<uint32_t>(batch_index >> 1) & 1u);
      sum_received<B>(slot, s, row_warp, lane, dot);
    }
    if (residual) cp_async_wait_all();  // this thread's g_h slots (only it reads them)
    // dx and the dw products: branch-free in one-cluster kernels of one- and two-row batches
    // (small_dx_rows), a branch per row elsewhere (measured, small_dx_rows).
    if constexpr (B == kSmallBackwardBatch || MULTI) {
#pragma unroll
      for (int i = 0; i < B; ++i) {
        if (!valid[i]) continue;
        const float b = dx_coefficient(r[i], dot[i], hidden_f);
        dx_row_for_flags<XT, 1>(p, row[i], nv, j, s.tpr, r[i], b, w, batch, i, acc, per_head,
                                residual, cast);
      }
    } else if (cast) {
      small_dx_rows<XT, B, true, RESIDUAL>(p, row, valid, r, dot, hidden_f, j, live, w, batch,
                                           acc[0]);
    } else {
      small_dx_rows<XT, B, false, RESIDUAL>(p, row, valid, r, dot, hidden_f, j, live, w, batch,
                                            acc[0]);
    }
  }
  if (exchange && batch_index == 0) cluster_wait();  // no rows: match the arrival
  if (residual) __syncthreads();  // every thread is done with its g_h slots (block_sums)

  write_small_dw<MULTI>(p, s, acc[0], block_sums, cluster, cta, t, group, j, live);
#endif
}

}  // namespace miles_rmsnorm
