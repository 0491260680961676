// miles-ext-kernels first-party RMSNorm: launch shapes as a function of the hidden size only.
//
// Every per-row decision (threads per row, vectors per thread, rows per CTA) depends on the
// hidden size alone, never on the row count, the grid or the device. That is what makes a
// row's outputs independent of T (batch invariance) and, together with the chunk partition of
// the backward, the weight gradient independent of the grid and the SM count.
// The Python package description (spec.py) mirrors these tables; a CI test compiles this header
// on the host and compares.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MILES_RMSNORM_HOST_DEVICE __host__ __device__
#else
#define MILES_RMSNORM_HOST_DEVICE
#endif

namespace miles_rmsnorm {

constexpr int64_t kMinHidden = 64;
constexpr int64_t kMaxHidden = 16384;
constexpr int64_t kHiddenMultiple = 8;  // one 16-byte vector of 2-byte elements
constexpr int kVectorElems = 8;

struct RowConfig {
  int vpt;            // 16-byte vectors per thread per row
  int tpr;            // threads per row group (row_threads)
  int block;          // threads per CTA
  int groups;         // row groups per CTA (block / tpr)
  int rows_per_group; // rows a group keeps in flight per iteration
  int rows_per_cta;   // rows a CTA processes per iteration (groups * rows_per_group)
};

constexpr MILES_RMSNORM_HOST_DEVICE int pow2_ceil(int64_t v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Threads of a row group for `vectors` 16-byte vectors per thread-slot: a power of two up to a
// warp, whole warps above (so no warp is split between groups and at most 31 threads idle).
constexpr MILES_RMSNORM_HOST_DEVICE int row_threads(int64_t vectors) {
  if (vectors <= 32) return pow2_ceil(vectors);
  return static_cast<int>((vectors + 31) / 32 * 32);
}

constexpr RowConfig make_config(int vpt, int tpr, int min_block, int rows_per_group) {
  RowConfig c{};
  c.vpt = vpt;
  c.tpr = tpr;
  c.block = tpr >= min_block ? tpr : tpr * (min_block / tpr);
  c.groups = c.block / tpr;
  c.rows_per_group = rows_per_group;
  c.rows_per_cta = c.groups * rows_per_group;
  return c;
}

// Rows a group keeps in flight per iteration, as a function of the vectors per thread (the
// kernels are instantiated per vpt and derive it from the same functions).
constexpr MILES_RMSNORM_HOST_DEVICE int forward_rows_per_group(int /*vpt*/) { return 2; }
constexpr MILES_RMSNORM_HOST_DEVICE int backward_rows_per_group(int vpt) {
  return vpt == 1 ? 2 : 1;
}

// Largest CTA of the backward programs per vpt. One vector per thread: up to 1024 threads of 64
// registers. Four (hidden > 8192): at most 512 threads, so that a thread may hold 128 registers
// (its 32 FP64 accumulators).
constexpr MILES_RMSNORM_HOST_DEVICE int backward_max_block(int vpt) {
  return vpt == 1 ? 1024 : 512;
}

// Forward: one or two vectors (8 or 16 elements) per thread, two rows in flight per group
// (constexpr: the launcher instantiates forward_fixed_kernel from it).
constexpr RowConfig forward_config(int64_t hidden) {
  const int64_t nv = hidden / kVectorElems;
  if (nv <= 32) return make_config(1, row_threads(nv), 256, forward_rows_per_group(1));
  return make_config(2, row_threads((nv + 1) / 2), 256, forward_rows_per_group(2));
}

// Forward through a cp.async ring: stages of a CTA's row loads kept in shared memory (the
// loads of the next kForwardRingStages - 1 iterations in flight while one is computed). The
// plain forward keeps its rows in registers, so the bytes in flight are bounded by how many
// 64-register threads an SM holds: floor(1024 / block) CTAs. Where that leaves at most 768 of
// 1024 threads (blocks of 352-384 and 544-768 threads: hidden 5128-6144 and 8200-12288) and the
// call has no residual (whose ring would halve the CTAs an SM holds), the ring keeps more bytes
// in flight. Measured on the H200 (spec.py has the numbers).
// The arithmetic is the same, so are the bits: the choice is a launch decision only.
constexpr int kForwardRingStages = 3;
constexpr int kForwardRingMaxResidentThreads = 768;

inline int forward_ring_stages(const RowConfig& c, bool residual) {
  const int resident = (1024 / c.block) * c.block;
  return !residual && resident <= kForwardRingMaxResidentThreads ? kForwardRingStages : 0;
}

// Dynamic shared memory of the ring: [stage][row][vector][thread] 16-byte slots.
inline int64_t forward_ring_bytes(const RowConfig& c) {
  return static_cast<int64_t>(kForwardRingStages) * c.rows_per_group * c.vpt * c.block * 16;
}

// Most rows of a call on a loop-free grid (a row group for every row) that the launcher treats
// as a small batch (mirrors spec.forward_small_batch_rows): the kernel's small-batch instance,
// and the row split over a cluster where that applies; past it, on the records that give every
// row a group (spec.FORWARD_ROWS_HIDDEN and the spread window, spec.forward_spread_rows), FP32
// weights load the weights after the row reduction (forward_rows_kernel's LATE_WEIGHTS).
constexpr int kForwardSmallBatchCtas = 128;  // spec.FORWARD_SMALL_BATCH_CTAS

inline int64_t forward_small_batch_rows(const RowConfig& c) {
  return static_cast<int64_t>(c.groups) * kForwardSmallBatchCtas;
}

// The forward's spread window (mirrors spec.forward_spread_rows): at most kForwardSpreadCtas
// CTAs' worth of rows, at most kForwardSpreadMaxRows; above kForwardSpreadMaxHidden the small
// batches only. Past it, a loop-free grid of rows of at most one warp (hidden <= 512)
// holds forward_config's row groups a CTA (256 threads) instead of one warp's worth: an SM holds
// at most 32 CTAs, so one-warp CTAs left it half its threads, and half its rows in flight
// (docs/kernels.md, step 65: 65536 x 256 40.7 us with one-warp CTAs, 19.3 with 256 threads).
constexpr int kForwardSpreadCtas = 384;       // spec.FORWARD_SPREAD_CTAS
constexpr int64_t kForwardSpreadMaxRows = 4096;  // spec.FORWARD_SPREAD_MAX_ROWS
constexpr int64_t kForwardSpreadMaxHidden = 8192;  // spec.FORWARD_SPREAD_MAX_HIDDEN

// Rows a group of such a CTA computes with the plain form (forward_rows_kernel's ROWS), by
// vectors a thread: two at H <= 256 (32 registers, no spill; at H 264-512, and four rows at 256,
// ptxas spilled 24-76 bytes). Measured on the H200 against one row a group (docs/kernels.md, step
// 65): 16384 x 256 6.47 -> 6.18 us, 65536 x 256 19.30 -> 19.18, the per-head view [16384, 24 of
// 32, 256] 110.8 -> 100.8, but 4096 x 256 3.07 -> 3.34 (256 CTAs, fewer than an H200 holds).
// In calls of at least kForwardWideRowsMinRows rows (spec.FORWARD_WIDE_ROWS_MIN_ROWS): below,
// two rows a group leave too few CTAs to fill the GPU (4096 x 256: 256 CTAs; one row a group
// there measured 3.35 -> 3.00 us, FP32 weights 3.27 -> 3.02, level at 16384 and 65536 rows).
template <int VPT>
constexpr int kForwardWideRows = VPT == 1 ? 2 : 1;
constexpr int64_t kForwardWideRowsMinRows = 16384;

inline int64_t forward_spread_rows(const RowConfig& c, int64_t hidden) {
  if (hidden > kForwardSpreadMaxHidden) return forward_small_batch_rows(c);
  const int64_t rows = static_cast<int64_t>(c.groups) * kForwardSpreadCtas;
  return rows < kForwardSpreadMaxRows ? rows : kForwardSpreadMaxRows;
}

// The row width of the deterministic backward's instance at a compile-time hidden size
// (backward_deterministic_kernel's HIDDEN): one vector a thread, so backward_config(hidden).tpr.
constexpr MILES_RMSNORM_HOST_DEVICE int backward_fixed_tpr(int hidden) {
  return row_threads(hidden / kVectorElems);
}

// Backward: one vector per thread (two rows in flight) up to hidden 8192, four vectors (one row)
// above; the FP64 dw accumulators live in registers.
inline RowConfig backward_config(int64_t hidden) {
  const int64_t nv = hidden / kVectorElems;
  if (nv <= 1024) return make_config(1, row_threads(nv), 512, backward_rows_per_group(1));
  return make_config(4, row_threads((nv + 3) / 4), 512, backward_rows_per_group(4));
}

// CTA of the deterministic backward for chunks of `rows_per_chunk` rows: as many row groups as
// a chunk's rows need (rows_per_group each), at most backward_config's, whole warps; four
// instead of two (one row each), which measured 0.1-0.5 us slower than one or four groups on the
// H200 (4 x 256: 3.9 against 3.4 us, 4 x 1024: 4.3 against 4.2). Idle groups join every barrier
// and the combine of the chunk's sums (one group skips it: 1 x 1024 3.95 -> 3.45 us, 16 x 1536
// 5.3 -> 4.7). Like the chunk partition it is a function of (rows, hidden) only, so dw's bits do
// not depend on the grid; a row keeps its threads and reduction tree, so dx's bits do not change.
inline int backward_chunk_block(const RowConfig& c, int64_t rows_per_chunk) {
  int64_t need = (rows_per_chunk + c.rows_per_group - 1) / c.rows_per_group;
  if (need == 2) need = 4;
  const int per_warp = c.tpr < 32 ? 32 / c.tpr : 1;  // groups that fill a warp
  const int64_t groups = (need + per_warp - 1) / per_warp * per_warp;
  return groups >= c.groups ? c.block : static_cast<int>(groups) * c.tpr;
}

// Large calls on the H200 (mirrors spec.backward_large_hidden / backward_large_block): at the
// hidden sizes whose backward CTA is 512 threads of row groups of 256 or 512 (H 1800-2048 and
// 3848-4096), the sm_90a routes' records give calls of at least kBackwardLargeRows rows
// kBackwardLargeChunks chunks (264 elsewhere), and their CTAs take 1024 threads, one CTA an SM,
// so that no two CTAs of one SM finish their rows apart. Returns that CTA size, or 0 where the
// call is not such a call. A function of (rows, hidden) on a route, like the chunk partition, so
// dw's bits do not depend on the grid; a row keeps its threads and reduction tree, so dx's bits
// do not change.
constexpr int64_t kBackwardLargeRows = 16384;  // spec.BACKWARD_LARGE_ROWS
constexpr int64_t kBackwardLargeChunks = 132;  // spec.BACKWARD_LARGE_CHUNKS

inline bool backward_large_hidden(const RowConfig& c) {
  return c.vpt == 1 && c.block == 512 && c.tpr >= 256;
}

inline int backward_large_block(const RowConfig& c, int64_t rows, int64_t n_chunks) {
  if (!backward_large_hidden(c) || rows < kBackwardLargeRows || n_chunks != kBackwardLargeChunks) {
    return 0;
  }
  return backward_max_block(1) / c.tpr * c.tpr;
}

// Small-batch deterministic backward (sm_90 and later: thread-block clusters). A row keeps the
// threads, vectors and reduction tree of backward_config (so its dx bits are those of the main
// program); one cluster of `ctas` CTAs splits the row's warps into column slices of
// `slice_warps` warps, and each CTA runs `row_groups` row groups over its slice, a row group
// taking a contiguous block of `rows_per_group` rows. The row groups, and so every bit of dw, are
// a function of (rows, hidden): they come from the portable shape (at most 8 CTAs), whichever
// cluster size runs. The cluster is a function of the hidden size and of the cluster sizes the
// launcher may use: up to 16 CTAs (non-portable: sm_90 H100 / H200) where the driver can place
// them, else at most 8.
struct SmallBackwardShape {
  int clusters;          // clusters of the grid, each over a contiguous block of rows
  int rows_per_cluster;  // rows of a cluster's block (the last may have fewer)
  int tpr;             // threads of a row (backward_config(hidden).tpr)
  int row_warps;       // warps of a row (1 when tpr <= 32: a group of tpr lanes)
  int ctas;            // cluster size: column slices of a row
  int slice_warps;     // warps of a row one CTA holds
  int slice;           // threads of a row one CTA holds
  int row_groups;      // row groups of a CTA
  int rows_per_group;  // rows of a row group (the last group may have fewer)
  int block;           // threads of a CTA (row_groups * slice)
};

constexpr int kSmallBackwardPortableCtas = 8;  // portable cluster size: the row partition's shape
constexpr int kSmallBackwardMaxCtas = 16;      // non-portable cluster size, where placeable
constexpr int kSmallBackwardMaxBlock = 512;
constexpr int kSmallBackwardMaxRowGroups = 16;
constexpr int kSmallBackwardBatch = 4;  // rows loaded together where a row group has more than 2
// A call spreads over several clusters where one cluster's CTAs would each move more than
// kSmallClusterBytes of g, x and dx (6 bytes * rows * a CTA's columns; docs/kernels.md step 42):
// one cluster for every kSmallClusterRows rows, at most kSmallMaxClusters (128 CTAs at 16 a
// cluster). The last CTA of a column slice holds every cluster's partial of a column in registers
// at once (fold_cluster_partials): one column a thread where the CTA has a thread for every
// column of its slice (3-4% of a multi-cluster call at H <= 4096 against two a pass, most of
// them predicated off; docs/kernels.md step 56), else kSmallFoldColumns columns a pass (the
// shapes the package routes here give a thread one to three columns).
constexpr int64_t kSmallClusterBytes = 48 * 1024;
constexpr int kSmallClusterRows = 8;
constexpr int kSmallMaxClusters = 8;
constexpr int kSmallFoldColumns = 2;

// The small-batch program serves the one-vector-per-thread shapes (hidden <= 8192).
inline bool small_backward_supported(int64_t hidden) {
  return backward_config(hidden).vpt == 1;
}

// Threads of a row one CTA holds when a row's warps are split over at most `max_ctas` CTAs (and
// the CTA count that split needs: ceil(row_warps / slice_warps)).
inline void small_backward_columns(SmallBackwardShape& s, int max_ctas) {
  const int ctas = s.row_warps < max_ctas ? s.row_warps : max_ctas;
  s.slice_warps = (s.row_warps + ctas - 1) / ctas;
  s.ctas = (s.row_warps + s.slice_warps - 1) / s.slice_warps;
  s.slice = s.tpr > 32 ? s.slice_warps * 32 : s.tpr;
}

// Clusters of a call of `rows` rows at the column split `s16` (the 16-CTA shape's): one while a
// CTA moves at most kSmallClusterBytes, else one per kSmallClusterRows rows, at most
// kSmallMaxClusters. A function of (rows, hidden) only.
inline int small_backward_clusters(int64_t rows, const SmallBackwardShape& s16) {
  const int64_t cta_bytes = 6 * rows * s16.slice * 8;  // a CTA's slice of g, x and dx
  if (cta_bytes <= kSmallClusterBytes) return 1;
  const int64_t want = (rows + kSmallClusterRows - 1) / kSmallClusterRows;
  return want < kSmallMaxClusters ? static_cast<int>(want) : kSmallMaxClusters;
}

// The launch shape for `rows` >= 1 rows with clusters of at most `max_ctas` CTAs. The rows are
// split into `clusters` contiguous blocks (small_backward_clusters, from the 16-CTA column split
// whatever `max_ctas`), one a cluster. A block's row partition is the portable shape's whatever
// `max_ctas`: as many row groups as fit its slice (at most 16, at most 512 threads), each of
// ceil(rows_per_cluster / groups) rows, and no group without rows. More CTAs give each CTA a
// narrower slice of the same row groups.
inline SmallBackwardShape small_backward_shape(int64_t rows, int64_t hidden,
                                               int max_ctas = kSmallBackwardMaxCtas) {
  const RowConfig c = backward_config(hidden);
  SmallBackwardShape s;
  s.tpr = c.tpr;
  s.row_warps = c.tpr > 32 ? c.tpr / 32 : 1;
  small_backward_columns(s, kSmallBackwardMaxCtas);
  const int clusters = small_backward_clusters(rows, s);
  s.rows_per_cluster = static_cast<int>((rows + clusters - 1) / clusters);
  s.clusters = static_cast<int>((rows + s.rows_per_cluster - 1) / s.rows_per_cluster);
  small_backward_columns(s, kSmallBackwardPortableCtas);
  const int fit = kSmallBackwardMaxBlock / s.slice;
  const int groups = fit < kSmallBackwardMaxRowGroups ? fit : kSmallBackwardMaxRowGroups;
  s.rows_per_group = (s.rows_per_cluster + groups - 1) / groups;
  s.row_groups = (s.rows_per_cluster + s.rows_per_group - 1) / s.rows_per_group;
  small_backward_columns(s, max_ctas);
  s.block = s.row_groups * s.slice;
  return s;
}

// The small-batch program's calls of a few dozen rows run in row CTAs and column CTAs instead of
// clusters (backward_row_column.cuh): a row CTA holds whole rows (row groups of tpr threads), a
// column CTA sums dw over `vectors` vectors in small_backward_shape's order, one task (a row group
// of a cluster block at one vector) a thread. A column CTA sums every row, or (`cluster` > 1) the
// column CTAs run in clusters of s.clusters CTAs, CTA k of a cluster summing cluster block k's
// rows of the cluster's vectors. All CTAs have `block` threads: whole rows, as few as make at
// least kRowColumnMinBlock threads.
struct RowColumnShape {
  int rows_per_cta;  // rows of a row CTA
  int row_ctas;      // ceil(rows / rows_per_cta), whole clusters
  int vectors;       // vectors of a column CTA (of a column cluster where cluster > 1)
  int column_ctas;   // ceil(hidden / 8 / vectors) * cluster
  int block;         // threads of every CTA: rows_per_cta * tpr, at least kRowColumnMinBlock
  int cluster;       // CTAs of a column cluster: 1, or s.clusters
  int split;         // column tasks a vector: 1, or kRowColumnWideSplit (row_column_task_split)
};

constexpr int kRowColumnMinBlock = 128;

// Whether the column CTAs of a call of `rows` rows at `hidden` whose small-batch shape is `s` run
// in clusters by default: where the call has several cluster blocks, from
// kColumnClusterMinRows rows, up to kColumnClusterMaxHidden, where they measured faster than
// column CTAs that each sum every row (kernel time with a cold L2, H200; docs/kernels.md step 63:
// 1024 x 256 5.57 -> 4.82 us, 1536 x 256 7.50 -> 5.86, 1024 x 512 6.11 -> 5.44, 512 x 1024 6.02
// -> 4.74, 768 x 1024 8.61 -> 6.35). At 64 and 256 rows, and at H 2048-8192, the clusters'
// exchange cost more than it saved (64 x 256 2.43 -> 3.10, 512 x 2048 5.65 -> 6.21, 512 x 4096
// 8.48 -> 9.34).
constexpr int64_t kColumnClusterMinRows = 512;
constexpr int64_t kColumnClusterMaxHidden = 1024;
inline bool row_column_clusters_default(const SmallBackwardShape& s, int64_t rows,
                                        int64_t hidden) {
  return s.clusters > 1 && rows >= kColumnClusterMinRows && hidden <= kColumnClusterMaxHidden;
}

// The wide instance (row_column_wide_batch) up to kRowColumnWideSplitMaxHidden splits each vector
// over kRowColumnWideSplit column tasks of 8 / kRowColumnWideSplit elements (the same additions
// for each element, so the same bits): each thread converts and adds half the products, and its
// column CTAs take half the vectors, twice as many of them (H200, kernel time with a cold L2,
// docs/kernels.md step 78: the per-head view [64, 24 of 32, 256] 5.34 -> 4.61 us, 2048 x 256
// 5.74 -> 4.90, 1536 x 512 5.95 -> 5.44). At H = 1024, where a task has 6-8 rows and the column
// CTAs already number 128, the extra CTAs cost more than the shorter tasks save (against whole-
// vector tasks: 768 x 1024 5.58 -> 5.86, 1024 x 1024 6.08-6.11 -> 6.88); four tasks a vector
// were 0.03-0.13 us slower than two at H 256-512.
constexpr int kRowColumnWideSplit = 2;
constexpr int64_t kRowColumnWideSplitMaxHidden = 512;
// Whether column clusters of `cluster` CTAs of `block` threads at shape `s` take the wide
// instance's tasks (row_column_wide_batch, before its bound on the vectors).
inline bool row_column_wide_tasks(const SmallBackwardShape& s, int block, int cluster) {
  return cluster > 1 && block <= kRowColumnMinBlock && s.rows_per_group > kSmallBackwardBatch;
}
// Column tasks a vector in a call of `hidden` whose shape takes the wide instance (`wide`).
inline int row_column_task_split(bool wide, int64_t hidden) {
  return wide && hidden <= kRowColumnWideSplitMaxHidden ? kRowColumnWideSplit : 1;
}

// The row and column CTAs of a call of `rows` rows whose small-batch shape is `s`, the column
// CTAs in clusters where `clustered` (and the call has several cluster blocks). A column CTA
// takes as many vectors as give each of its first min(block, kSmallBackwardMaxBlock) threads one
// task: clusters x row groups tasks a vector alone, row groups tasks a vector in a cluster, or
// row groups x kRowColumnWideSplit for the wide instance's (at most kSmallMaxClusters x
// kSmallBackwardMaxRowGroups = 128 = kRowColumnMinBlock, and at most 16 row groups in a cluster,
// so at least one vector a CTA and at most min(block, kSmallBackwardMaxBlock) tasks; a cluster at
// most the row's vectors).
inline RowColumnShape row_column_shape(const SmallBackwardShape& s, int64_t rows, int64_t hidden,
                                       bool clustered) {
  RowColumnShape rc;
  rc.rows_per_cta = (kRowColumnMinBlock + s.tpr - 1) / s.tpr;
  rc.block = rc.rows_per_cta * s.tpr;
  rc.cluster = clustered && s.clusters > 1 ? s.clusters : 1;
  const int threads = rc.block < kSmallBackwardMaxBlock ? rc.block : kSmallBackwardMaxBlock;
  const int nv = static_cast<int>(hidden / 8);
  rc.split = row_column_task_split(row_column_wide_tasks(s, rc.block, rc.cluster), hidden);
  if (rc.cluster > 1) {
    const int vectors = threads / (s.row_groups * rc.split);
    rc.vectors = vectors < nv ? vectors : nv;
  } else {
    rc.vectors = threads / (s.clusters * s.row_groups);
  }
  rc.column_ctas = (nv + rc.vectors - 1) / rc.vectors * rc.cluster;
  const int row_ctas = static_cast<int>((rows + rc.rows_per_cta - 1) / rc.rows_per_cta);
  rc.row_ctas = (row_ctas + rc.cluster - 1) / rc.cluster * rc.cluster;
  return rc;
}

// Column clusters of CTAs of at most kRowColumnMinBlock threads load up to kRowColumnWideBatch rows
// of a task at once where its row groups have more rows than kSmallBackwardBatch (an instance
// bounded at kRowColumnMinBlock threads: 126-128 registers without a spill at sm_90a, four CTAs
// an SM; 12 rows in registers spilled 64 bytes, 16 rows 1000), and with each such batch the next
// kRowColumnStagedRows rows go to shared memory (cp.async) and are added after it: one memory
// round trip for up to 16 rows (1536 x 256's tasks have 12, 2048 x 256's 16). A launch choice:
// the same additions in the same order, so the same bits.
constexpr int kRowColumnWideBatch = 8;
constexpr int kRowColumnStagedRows = 8;
// The wide instance's CTAs fold at most ceil(kRowColumnWideMaxVectors / cluster) vectors of their
// cluster's (its shared memory for the peers' block sums). Its calls have more than
// kSmallBackwardBatch rows a group, so (rows of at most kRowColumnMinBlock threads) at least 13
// row groups, so at most 9 vectors a cluster: the bound never declines a call.
constexpr int kRowColumnWideMaxVectors = 64;
inline bool row_column_wide_batch(const SmallBackwardShape& s, const RowColumnShape& rc) {
  return row_column_wide_tasks(s, rc.block, rc.cluster) && rc.vectors <= kRowColumnWideMaxVectors;
}

// Whether a small-batch call of `rows` rows runs in row and column CTAs: from kRowColumnMinRows
// rows, where they measured faster than the clusters on the H200 (kernel time with a cold L2 and
// CUDA graphs with a warm one, T 2-256 x H 256-8192; docs/kernels.md step 60): 32-42% faster at
// T = 64, 5-39% at T 24-256 and H <= 4096, 35-42% at T 24-64 and H 5120-8192, 1-23% at T 8-16,
// and from 14% faster to 2% slower at T 96-256 and H 5120-8192 (256 x 8192). Below it the
// clusters spread a few rows over more SMs: at T = 2 the row and column CTAs were 8-21% slower,
// at T = 4 up to 13-15%, at T = 6 from 12% faster to 6% slower.
constexpr int kRowColumnMinRows = 8;
inline bool row_column_default(int64_t rows) {
  return rows >= kRowColumnMinRows;
}

// ceil(2^32 / d) for 2 <= d <= 1024: for every n < 2^16, n / d == umulhi(n, magic) (the
// rounding error n * (magic - 2^32 / d) / 2^32 stays below 1 / d).
inline unsigned int division_magic(int d) {
  return static_cast<unsigned int>(((UINT64_C(1) << 32) + static_cast<uint64_t>(d) - 1) /
                                   static_cast<uint64_t>(d));
}

// n / d for every n < 2^31 as (n * magic) >> shift (a 64-bit product), for 1 <= d < 2^31: with s =
// ceil(log2 d), magic = ceil(2^(31 + s) / d) = (2^(31 + s) + e) / d for some 0 <= e < d <= 2^s,
// and shift = 31 + s. Then n * magic / 2^shift = n / d + n * e / (d * 2^shift), and with n = q * d
// + r the excess over q is (r + n * e / 2^shift) / d < (d - 1 + 1) / d: the floor is q. magic <
// 2^32 (d > 2^(s - 1)). A d outside the range gets {0, 0} (its rows are not addressed this way).
struct RowDivision {
  unsigned int magic;
  unsigned int shift;
};

inline RowDivision row_division(int64_t d) {
  if (d < 1 || d >= (INT64_C(1) << 31)) return {0u, 0u};
  unsigned int s = 0;
  while ((INT64_C(1) << s) < d) ++s;
  const uint64_t magic = ((UINT64_C(1) << (31 + s)) + static_cast<uint64_t>(d) - 1) /
                         static_cast<uint64_t>(d);
  return {static_cast<unsigned int>(magic), 31 + s};
}

// n / d by d's row_division (n < 2^31).
MILES_RMSNORM_HOST_DEVICE inline unsigned int divide_row(unsigned int n, RowDivision d) {
  return static_cast<unsigned int>((static_cast<uint64_t>(n) * d.magic) >> d.shift);
}

inline bool hidden_supported(int64_t hidden) {
  return hidden >= kMinHidden && hidden <= kMaxHidden && hidden % kHiddenMultiple == 0;
}

}  // namespace miles_rmsnorm
