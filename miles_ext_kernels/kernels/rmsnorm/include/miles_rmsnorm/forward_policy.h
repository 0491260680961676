// miles-ext-kernels first-party RMSNorm: the forward launcher's measured choices of kernel
// instance (host code). None changes a bit of y, rstd or h_new — every instance has the same
// arithmetic — only how long a call takes; the numbers are the H200's (docs/kernels.md, step 44).
#pragma once

#include <cstdint>

#include "miles_rmsnorm/config.h"

namespace miles_rmsnorm {

// CTAs a split row may take (forward_split_kernel): a portable cluster size.
constexpr int kMaxSplitCtas = 8;

// Bytes a CTA that computes a whole row moves from and to memory: x and y (u and h_new too with a
// residual), 2 bytes an element each, and the weights.
inline int64_t split_row_bytes(int64_t hidden, bool residual, int weight_bytes) {
  return hidden * ((residual ? 8 : 4) + weight_bytes);
}

// Rows that the fixed kernel computes (forward_fixed_kernel: BF16 rows at a hidden size of
// kFixedForwardHidden, of one head or per-head views where fixed_forward_per_head says) stay one
// CTA a row below this hidden size: one CTA of the fixed kernel measured faster than the split on
// the H200 at H 4096-8192 (docs/kernels.md step 90: the residual 16 x 6144 2.98 -> 2.60 us, 16 x
// 6144 with an FP32 weight 2.69 -> 2.42, 16 x 8192 2.80 -> 2.59), the split faster at 12288 (1 x
// 12288 2.43 against 2.72 in one CTA).
constexpr int64_t kSplitFixedMinHidden = 12288;

// The measured choice (H200, docs/kernels.md steps 44 and 90) of CTAs a row of a small batch is
// split over, 0 for one CTA a row: the largest power of two up to 8 that keeps a CTA an SM (rows *
// ctas <= sms), where a whole row would move at least 48 KB and the cluster gets at least four
// CTAs, or at least 96 KB with two. Below that, the cluster's start and exchange (0.1-0.15 us)
// cost more than the smaller share of the row saves (1 x 4096: 2.21 us in one CTA, 2.33 in two).
// `fixed_kernel`: whether one CTA a row would run forward_fixed_kernel (see above); such rows keep
// one CTA below kSplitFixedMinHidden.
inline int split_row_default(int64_t rows, int64_t hidden, bool residual, int weight_bytes,
                             int sms, bool fixed_kernel) {
  if (fixed_kernel && hidden < kSplitFixedMinHidden) return 0;
  int ctas = kMaxSplitCtas;
  while (ctas > 1 && rows * ctas > sms) ctas >>= 1;
  const int64_t bytes = split_row_bytes(hidden, residual, weight_bytes);
  if (ctas >= 4 && bytes >= 48 * 1024) return ctas;
  if (ctas >= 2 && bytes >= 96 * 1024) return ctas;
  return 0;
}

// Hidden sizes whose small batches take a forward instance of their own (forward_fixed_kernel:
// the row's width and bounds fixed at compile time, same bits), for BF16 activations in contiguous
// or row-strided rows (per-head views where fixed_forward_per_head says); every other call takes
// forward_rows_kernel. Each is a whole number of vectors a thread of rows of whole warps.
// Measured on the H200 (docs/kernels.md): 3-10% faster at T = 16-256 without a residual (step
// 45), 0.3-0.45 us faster with one at T = 16-64 (step 47); the sizes of step 83 (rows of one
// warp at 256 and 512, where fixed_row_sum needs no barrier, and 1024-3072, 7168, 12288) 3-22%
// faster at T = 1-256 (1 x 1536 2.11 -> 1.87 us, the residual 16 x 1536 2.54 -> 1.98), 16384
// (6% slower at 128 rows with FP32 weights) keeping forward_rows_kernel.
constexpr int kFixedForwardHidden[] = {256,  512,  1024, 1536, 2048, 2560, 3072,
                                       4096, 5120, 6144, 7168, 8192, 12288};
constexpr int kFixedForwardCount = sizeof(kFixedForwardHidden) / sizeof(kFixedForwardHidden[0]);

// Whether forward_fixed_kernel issues the weights' loads with the row's, tied to the row's first
// use (WEIGHTS_FIRST; before them until step 80): always with a residual (else ptxas placed them
// behind the residual's sums), and for the plain form up to kFixedWeightsFirstRows rows, where
// one cold call's weights are on its critical path. Measured on the H200 (docs/kernels.md, step
// 48): plain calls 3-8% faster at T = 1 that way (1 x 2048 2.04 -> 1.90 us), within 1.5% either
// way at T = 16, and 3-5% slower at T = 64-256 (256 x 2048 2.64 -> 2.76), where the weights are in
// L2 for every CTA but the first. Step 92 (docs/kernels.md) measured two more places where the
// weights first win: rows of one warp (H up to kFixedWeightsFirstAllRowsHidden: 256 and 512),
// 0.89-0.98 of the other order's time at 17-64 rows and level at 128-1024, so at every row count;
// and the latency window's large calls, from kFixedWeightsFirstMinRows rows (768-2048 x 1024 and
// 768-1024 x 2048: 0.90-0.97), where smaller ones at H 1024-8192 were level or slower. Same bits.
constexpr int64_t kFixedWeightsFirstRows = 16;
constexpr int64_t kFixedWeightsFirstAllRowsHidden = 512;
constexpr int64_t kFixedWeightsFirstMinRows = 768;

inline bool fixed_forward_weights_first(int64_t rows, int64_t hidden, bool residual) {
  return residual || rows <= kFixedWeightsFirstRows || hidden <= kFixedWeightsFirstAllRowsHidden ||
         rows >= kFixedWeightsFirstMinRows;
}

// The plain form of a small batch at kFixedHalvesHidden with two CTAs a row
// (forward_fixed_halves_kernel: the same bits) where that still leaves a CTA an SM: from
// kFixedHalvesMinRows rows up to half the SM count. Measured on the H200 (docs/kernels.md, step
// 71; spec.py mirrors the rule): 64 x 8192 3.04-3.08 -> 2.94-2.99 us with an FP32 weight and
// 3.05-3.06 -> 2.90-2.96 with a BF16 one, 56 x 8192 4-7% faster; level at 32 x 8192, level or
// slower at H 2048, 5120 and 6144 (64 x 5120 2.69-2.74 against 2.70-2.77) and mixed at 4096 (64 x
// 4096: 0.96-1.04 in five A/Bs), which keep one CTA a row.
constexpr int64_t kFixedHalvesHidden = 8192;
constexpr int64_t kFixedHalvesMinRows = 33;

inline bool fixed_forward_halves(int64_t rows, int64_t hidden, bool residual, int sms) {
  return !residual && hidden == kFixedHalvesHidden && rows >= kFixedHalvesMinRows &&
         2 * rows <= sms;
}

// Whether a streaming call (past the small batches) of rows x hidden elements takes an evict_last
// instance where its kernel has one: x (and u) loaded with an L2 evict_last policy, same bits.
// The gain grows with the call's bytes and depends on the hidden size; measured on the H200
// (docs/kernels.md, steps 72-74; B V V B against plain loads).
// forward_keep_rows: the loop-free kernel and the row loop (forward.cuh: kKeepRows, two vectors
// a thread with 2-byte weights).
// * With a residual (the row loop) from kKeepRowsMinResidualHidden: 16384 x 4096, 8192 x 8192
//   and 4096 x 16384 2.1-2.9% faster (16384 x 4096: 134.2 -> 130.3 us), 12288 1.3%, level at
//   6144. Below it from kKeepRowsMinResidualElements: 65536 x 1024 +2.5%, 65536 x 2048 +3.4%,
//   32768 x 3072 +2.1%, where 16384 x 1024 and 8192 x 3072 were 1.1-1.5% slower.
// * Without one at the hidden sizes of kKeepRowsPlainHidden (65536 x 8192 515.5 -> 496.2 us,
//   16384 x 8192 1.5% faster, 16384 x 4096 0.5-0.7%) and elsewhere from
//   kKeepRowsMinPlainElements (65536 x 5120 +2.6%, level at 65536 x 7168 and 32768 x 16384),
//   where smaller calls were 1.2-2.1% slower (H 512-3072, 7168 and 16384 at 16384 rows and less).
// * Both of the hidden-size rules from kKeepRowsMinHiddenElements only (docs/kernels.md, step
//   83): below it the rows pinned in L2 cost the next kernel more than the call gains, 1024 x
//   4096 6.80 -> 6.04 us, 1024 x 8192 12.1 -> 10.4, 4096 x 4096 19.7 -> 18.2 and the residual
//   1024 x 4096 11.9 -> 10.4 without the policy (2-14%), level at 8192 x 4096.
// forward_keep_ring: the ring (forward_ring_kernel, every weight type; plain H 8200-12288 past
// the small batches) from kKeepRingMinElements: 16384 x 10240 0.2-1.0% faster, 16384 x 12288
// 2.5-2.7%, 65536 x 10240 and 65536 x 12288 4.1-4.2% (BF16 and FP32 weights alike); 16384 x 9216
// level, 8192 x 10240 1.1% and 4096 x 12288 2.0% slower.
constexpr int64_t kKeepRowsMinResidualHidden = 4096;
constexpr int64_t kKeepRowsMinHiddenElements = int64_t{1} << 25;
constexpr int64_t kKeepRowsMinResidualElements = int64_t{1} << 26;
constexpr int64_t kKeepRowsPlainHidden[] = {4096, 8192};
constexpr int64_t kKeepRowsMinPlainElements = int64_t{1} << 28;
constexpr int64_t kKeepRingMinElements = int64_t{16384} * 10240;

inline bool forward_keep_rows(int64_t rows, int64_t hidden, bool residual) {
  const int64_t elements = rows * hidden;
  if (residual) {
    return (hidden >= kKeepRowsMinResidualHidden && elements >= kKeepRowsMinHiddenElements) ||
           elements >= kKeepRowsMinResidualElements;
  }
  for (int64_t h : kKeepRowsPlainHidden) {
    if (h == hidden && elements >= kKeepRowsMinHiddenElements) return true;
  }
  return elements >= kKeepRowsMinPlainElements;
}

inline bool forward_keep_ring(int64_t rows, int64_t hidden) {
  return rows * hidden >= kKeepRingMinElements;
}

// Whether a call past the spread window whose rows take one warp each (forward_config: tpr 32,
// one vector a thread; H 136-256) runs as a half-warp a row (forward_half_warp_kernel, the plain
// form; same bits): with 2-byte weights at every such row count, with FP32 weights (which that
// kernel loads after the row sum) from kForwardWideRowsMinRows rows. Measured on the H200 against
// forward_rows_kernel (docs/kernels.md, step 82; two A/Bs): BF16 weights 3-12% faster from 8192
// rows (16384 x 256 6.30 -> 5.55 us, 65536 x 256 19.00 -> 18.22), level at 4096; FP32 weights
// 1-6% faster from 16384 rows, where forward_rows_kernel's two-row groups load them late too,
// and 4-11% slower below (4096 x 256 3.04 -> 3.28), where it loads them with the row. The
// residual form measured level to 2% slower.
inline bool forward_half_warp(int64_t rows, int64_t hidden, bool residual, int weight_bytes) {
  const RowConfig c = forward_config(hidden);
  if (residual || c.vpt != 1 || c.tpr != 32 || rows <= forward_spread_rows(c, hidden)) {
    return false;
  }
  return weight_bytes == 2 || rows >= kForwardWideRowsMinRows;
}

// forward_fixed_rows from more than this many rows: at 128-256 rows 8 rows a CTA measured 0.93-0.99
// of one row a CTA on the H200, level at 64 (docs/kernels.md, session 55's call 6).
constexpr int64_t kFixedRowsMinRows = 64;

// Most rows of a forward_fixed_kernel call: its row index is an int, with a CTA's rows to spare.
constexpr int64_t kFixedRowsMaxRows = int64_t{1} << 30;

// Whether `hidden` has a forward_fixed_kernel instance.
constexpr bool fixed_forward_hidden(int64_t hidden) {
  for (int i = 0; i < kFixedForwardCount; ++i) {
    if (kFixedForwardHidden[i] == hidden) return true;
  }
  return false;
}

// Whether per-head views [T, heads, D] of BF16 rows at D = hidden take the fixed kernels (their
// PER_HEAD instances: forward_fixed_kernel and forward_fixed_warp_rows_kernel, by the same rules as
// rows of one head; same bits): the fixed sizes whose rows take one warp (256 and 512), where the
// instances are few. Elsewhere per-head views take forward_rows_kernel, whose run-time per-head
// branch and constant loads come ahead of the row's loads (step 80). Measured on the H200
// (docs/kernels.md, step 93).
constexpr bool fixed_forward_per_head(int64_t hidden) {
  return fixed_forward_hidden(hidden) && forward_config(hidden).tpr == 32;
}

// Whether one CTA a row of BF16 activations at `hidden` (a row of `heads` heads' views) runs as
// forward_fixed_kernel: a fixed size, rows of one head or per-head views where
// fixed_forward_per_head says. The launcher's fixed-kernel instances and its split choice
// (split_row_default's fixed_kernel) both test this.
constexpr bool fixed_forward_rows_of(int64_t hidden, int64_t heads) {
  return fixed_forward_hidden(hidden) && (heads == 1 || fixed_forward_per_head(hidden));
}

// The hidden size whose rows take half a warp (forward_config: tpr 16, one vector a thread) with a
// forward_fixed_kernel instance: its BF16 plain calls on the loop-free grid of two rows a CTA (the
// small batches and the spread window), per-head views included, take that instance at TPR 16,
// two rows a warp, instead of forward_rows_kernel (the same grid, the same bits). Measured on the
// H200 (docs/kernels.md, step 94). MILES_EXT_KERNELS_FIXED_HALF_WARP = "0" turns it off (a test
// hook: both kernels give the same bits).
constexpr int64_t kFixedHalfWarpHidden = 128;

inline bool fixed_forward_half_warp(int64_t hidden, bool residual) {
  return hidden == kFixedHalfWarpHidden && !residual;
}

// Whether a call of BF16 rows at a hidden size of kFixedForwardHidden whose rows take one warp
// (H 256 and 512) runs as forward_fixed_kernel with forward_config's CTA: its groups (8) rows of
// one warp a CTA (the kernel's ROWS; no barrier, same bits), from more than kFixedRowsMinRows
// rows, the plain form up to the spread window, the residual form at every row count up to
// kFixedRowsMaxRows. Elsewhere one row a CTA (the small batches) or the streaming kernels run.
// Measured on the H200 (docs/kernels.md, step 85; A W W A and W B B W W B): against one row a
// CTA, 0.92-1.00 at 384-1024 rows (geomean 0.96; 1024 x 512 with FP32 weights 2.65 -> 2.45 us);
// against the loop-free and streaming kernels, the plain form 10-29% faster at 1025-3072 rows
// (3072 x 512 with FP32 weights 5.10 -> 3.64, 2048 x 256 3.04 -> 2.46), level to 5% slower at
// 4096 and to 13% at 16384 (past the spread window, where a row a warp has fewer bytes in flight
// than the wide rows or a half-warp a row); the residual form 14-24% faster at 1025-4096 rows and
// 3-10% at 16384-65536 (65536 x 512 68.74 -> 66.58 us), where the row loop runs.
inline bool forward_fixed_rows(int64_t rows, int64_t hidden, bool residual) {
  const RowConfig c = forward_config(hidden);
  if (!fixed_forward_hidden(hidden) || c.tpr != 32 || rows <= kFixedRowsMinRows ||
      rows > kFixedRowsMaxRows) {
    return false;
  }
  return residual || rows <= forward_spread_rows(c, hidden);
}

// Hidden sizes of forward_fixed_warp_rows_kernel (forward_fixed.cuh): the fixed kernel's sizes
// whose rows take one warp (spec.WARP_ROWS_HIDDEN).
constexpr int64_t kWarpRowsHidden[] = {256, 512};

// Whether a call of BF16 rows (contiguous or row-strided) runs as forward_fixed_warp_rows_kernel
// (4 / VPT rows a warp, same bits): the plain forms at kWarpRowsHidden past the spread window, up
// to kFixedRowsMaxRows, with either weight type. Measured on the H200 (docs/kernels.md, step 87;
// two machines, the same harness) against the kernels it replaces there (forward_half_warp_kernel
// at H 256, forward_rows_kernel at 512): 0.87-1.00 of their time at 3073-65536 rows (16384 x 512
// with FP32 weights 11.27 -> 9.87 us, 4096 x 512 3.96-4.13 -> 3.74), 3073 x 256 with FP32 weights
// level (2.76-2.85 -> 2.85).
inline bool forward_warp_rows(int64_t rows, int64_t hidden, bool residual) {
  bool sized = false;
  for (int64_t h : kWarpRowsHidden) sized = sized || h == hidden;
  if (!sized || residual || rows > kFixedRowsMaxRows) return false;
  return rows > forward_spread_rows(forward_config(hidden), hidden);
}

// Whether a call past the small batches (forward_small_batch_rows) still takes the small-batch path
// (forward_fixed_kernel where it has an instance, else forward_rows_kernel with SMALL_BATCH: one
// row a CTA, up to 64 registers, the weights loaded with the row) instead of the streaming kernels,
// at H kLatencyWindowMinHidden-8192 up to latency_window_elements (T <= 2048 at H = 1024, 256 at
// 8192; below H 1024, rows of two warps, T <= 64527 at 520): the residual form, FP32 weights, and
// BF16 rows at the fixed instance's hidden sizes. At H 2048-8192 the row loop (the residual form)
// and the 32-register instance, which loads FP32 weights after the row reduction, measured 7-15%
// slower (256 x 4096 with a residual: 5.15 against 4.51 us; 256 x 8192 with FP32 weights: 5.13
// against 4.66; docs/kernels.md, step 44), and the streaming instance 2-8% slower than the fixed
// one (512 x 2048: 3.14 against 2.88 us cold; step 46); past it the streaming kernels win (512 x
// 8192 with a residual: 10.8 against 11.6 us). At H 1024-2047 (step 84) the window measured 7-23%
// faster with FP32 weights or a residual (1024 x 1536: FP32 weights 4.00 -> 3.31 us, the residual
// 5.95 -> 4.68), 1-9% with BF16 weights at 1536 and level at 1024. At H 520-1016 (step 85; rows of
// two warps, no fixed instance, so FP32 weights and the residual form only) 4-15% faster up to 2^23
// elements (2048 x 640 with FP32 weights 4.24 -> 3.61 us), 1.5-4% at 2^24-2^25 (32768 x 896: FP32
// weights 31.49 -> 30.23, the residual 59.37 -> 57.82).
constexpr int64_t kLatencyWindowMinHidden = 520;
constexpr int64_t kLatencyWindowMaxHidden = 8192;
constexpr int64_t kLatencyWindowElements = int64_t{1} << 21;
constexpr int64_t kLatencyWindowShortRowsHidden = 1024;  // below it: kLatencyWindowShortElements
constexpr int64_t kLatencyWindowShortElements = int64_t{1} << 25;

// The most elements of a call in the latency window at `hidden`.
constexpr int64_t latency_window_elements(int64_t hidden) {
  return hidden < kLatencyWindowShortRowsHidden ? kLatencyWindowShortElements
                                                : kLatencyWindowElements;
}

// Whether the row loop's residual form at `hidden` is held to at most
// kForwardRingMaxResidentThreads threads an SM by its registers (the shape whose plain form takes
// the ring, forward_ring_stages; of the fixed sizes, H = 6144: two 384-thread CTAs).
inline bool residual_row_loop_thread_bound(int64_t hidden) {
  const RowConfig c = forward_config(hidden);
  return (1024 / c.block) * c.block <= kForwardRingMaxResidentThreads;
}

// Rows up to which BF16 residual calls with BF16 weights at a fixed size whose row loop is
// thread-bound keep the fixed kernel, past kLatencyWindowElements: measured on the H200
// (docs/kernels.md, step 49) 1024 x 6144 16.40 -> 15.11 us; at 4096, whose row loop holds 1024
// threads an SM, the fixed kernel was 1.5% slower at 1024 rows, so that size keeps the window.
constexpr int64_t kLatencyWindowThreadBoundRows = 1024;

inline bool forward_latency_window(int64_t rows, int64_t hidden, bool residual, int weight_bytes,
                                   bool bf16_rows) {
  if (hidden < kLatencyWindowMinHidden || hidden > kLatencyWindowMaxHidden) return false;
  if (residual && bf16_rows && weight_bytes == 2 && fixed_forward_hidden(hidden) &&
      residual_row_loop_thread_bound(hidden) && rows <= kLatencyWindowThreadBoundRows) {
    return true;
  }
  if (rows * hidden > latency_window_elements(hidden)) return false;
  return residual || weight_bytes == 4 || (bf16_rows && fixed_forward_hidden(hidden));
}

}  // namespace miles_rmsnorm
