// miles-ext-kernels first-party RMSNorm: kernel parameter blocks shared by kernels and bindings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace miles_rmsnorm {

enum Flags : int {
  kResidual = 1,
  kCastBeforeWeightMul = 2,
  kZeroCenteredGamma = 4,
  // Set by the deterministic backward's launcher only (never by a caller): the grid is one
  // thread-block cluster of one CTA a chunk, and the chunk partials are folded through
  // distributed shared memory (backward.cuh, cluster_fold_partials).
  kClusterFold = 1 << 30,
};

enum DType : int { kBF16 = 0, kFP16 = 1, kFP32 = 2 };

// Rows are addressed as (row / heads) * stride + (row % heads) * head_stride, so per-head views
// [T, heads, D] of a wider buffer are read in place; plain [T, H] inputs use heads = 1.
struct RowAddress {
  int64_t stride;
  int64_t head_stride;
};

// Field order: what a call of one row reads first. The parameters sit at 0x210 of constant bank 0
// on sm_90, and a kernel's first constant loads miss in every 64-byte line they touch. A plain
// call of forward_fixed_kernel with one row a CTA (the small batches) reads x, w, y, rstd, eps
// and x's row stride, all inside the line from 0x200 (0x210-0x23f), and no row count (its grid
// is one CTA a row); the residual form's u, h_new and u's row stride share the next line.
// Measured on an H100 (docs/kernels.md, step 102): with those fields over two lines, a one-warp
// kernel's call took 0.03-0.06 us longer, cold or warm.
struct ForwardParams {
  const void* x;
  const void* w;
  void* y;        // [rows, hidden] contiguous
  float* rstd;    // [rows]
  float eps;
  int flags;
  RowAddress x_addr;  // x_addr.stride at 0x238, the line's last field
  int64_t rows;
  int64_t hidden;
  int64_t heads;
  const void* u;  // residual (flags & kResidual)
  void* h_new;    // [rows, hidden] contiguous (flags & kResidual)
  RowAddress u_addr;
  int tpr;
  int groups;                 // row groups of a CTA (block / tpr)
  unsigned int group_magic;   // ceil(2^32 / tpr): thread / tpr = umulhi(thread, group_magic)
  // row / heads as (row * head_magic) >> head_shift for rows below 2^31 (row_division, config.h):
  // the forward kernels' per-head views (device.cuh, wide_row_offset).
  unsigned int head_magic;
  unsigned int head_shift;
};

// The lines above, as offsets from the parameters' start (0x210): a plain one-row call's fields
// end with x's row stride at 0x238, the residual form's at u's row stride (0x270-0x27f).
static_assert(offsetof(ForwardParams, x_addr) == 0x28 && sizeof(RowAddress) == 16,
              "x's row stride in the parameters' first line");
static_assert(offsetof(ForwardParams, u) == 0x50 && offsetof(ForwardParams, u_addr) == 0x60,
              "the residual form's fields in the second line");

// Field order: what a call of one row reads first (docs/kernels.md step 89). The parameters sit
// at 0x210 of constant bank 0 on sm_90; the pointers, the row count, the hidden size and the
// flags take 0x210-0x25f (inside the two 64-byte lines from 0x200), so that a one-row call's first
// constant loads miss in two lines, not three (with the flags at the end, 0x2b0, the row sum's
// zero-centred select waited on a third).
struct BackwardParams {
  const void* g;
  const void* x;
  const void* w;
  const float* rstd;
  void* dx;         // [rows, hidden] contiguous
  float* dw;        // [hidden]
  const void* g_h;  // gradient flowing into h_new directly (flags & kResidual)
  int64_t rows;
  int64_t hidden;
  int flags;
  int tpr;
  int64_t heads;
  double* partial;  // [n_chunks, hidden] (deterministic program)
  unsigned int* counters;
  int64_t n_chunks;
  int64_t rows_per_chunk;
  RowAddress g_addr;
  RowAddress x_addr;
  RowAddress gh_addr;
};

}  // namespace miles_rmsnorm
