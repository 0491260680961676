// miles-ext-kernels first-party RMSNorm: the deterministic backward launcher's measured choices of
// kernel instance, ring depth and grid (host code). None changes a bit of dx or dw (the
// instances have the same arithmetic and the same chunk partition), only how long a call takes;
// the numbers are the H200's (docs/kernels.md, step 74) and, for the ring depth and the grid, an
// H100 SXM's (steps 100-101).
#pragma once

#include <cstdint>

#include "miles_rmsnorm/config.h"

namespace miles_rmsnorm {

// Whether a deterministic backward call of rows x hidden copies g and x with an L2 evict_last
// policy (backward_deterministic_kernel's KEEP instance: one vector a thread, rows addressed
// contiguously, no residual). Measured on the H200 (B V V B against plain copies): 65536 x 4096
// 428.7 -> 420.2 us, 65536 x 8192 825.2 -> 809.0, 32768 x 8192 424.2 -> 416.0 (-2.0% each),
// 32768 x 4096 and 65536 x 2048 level (0.3-0.6% faster), 16384 x 4096 0.5% faster; but 16384 x
// 2048 1.3% and 4096 x 4096 2.9% slower, the residual form level or slower (65536 x 2048 +0.4%,
// 16384 x 4096 +0.9%) and four vectors a thread 0.6% slower at 32768 x 12288.
constexpr int64_t kKeepBackwardMinElements = int64_t{1} << 28;

inline bool backward_keep_rows(int64_t rows, int64_t hidden, bool residual) {
  return !residual && backward_config(hidden).vpt == 1 &&
         rows * hidden >= kKeepBackwardMinElements;
}

// The hidden size whose deterministic backward has an instance of its own, with the row width
// and the hidden size as compile-time constants (backward_deterministic_kernel's HIDDEN; same
// bits: the same arithmetic in the same order). Measured on an H100 SXM as an upper bound
// (docs/kernels.md, steps 106-107; the row loop 1259 -> 1095 SASS instructions): 16384 x 2048
// 0.988-0.991, 65536 x 2048 0.992-0.993, FP32 weights 0.990-0.991, the residual form 0.990-0.993;
// with GridPace 0.986 and 0.971; as landed with it (session 74, step 107), 0.990-0.994 and
// 0.969-0.980. H 2048 only: the hidden size of the brief's line that misses.
constexpr int kBackwardFixedHidden = 2048;

inline bool backward_fixed_hidden(int64_t hidden, int tpr, int64_t heads) {
  return hidden == kBackwardFixedHidden && heads == 1 &&
         tpr == backward_fixed_tpr(kBackwardFixedHidden);
}

// The fewest iterations the largest chunk of a paced launch runs (backward_pace), measured on H100s
// in 1024-thread CTAs: 16 iterations 0.2-0.8% faster at 16384 x 2048 but 0.5-1.2% slower at
// 4096 x 8192; 31 1.1% faster (16384 x 4096); 62-124 2-3% faster (docs/kernels.md step 107).
// Measured again with the paced instance (step 109): 16-18 iterations level or up to 0.5%
// slower, 19 iterations 1.0% faster at 5000 x 8192 and 0.2-0.7% at 20000 x 2048.
constexpr int64_t kPaceMinIterations = 24;

// Whether a deterministic backward launch paces its CTAs (GridPace, device.cuh; the kernel's PACE
// instance, same bits: pacing only delays a CTA, never changes its rows or their order). Where
// it measured faster on H100s (docs/kernels.md step 107): one vector a thread (four already spill
// a few registers, and pacing grew their stack frames) in CTAs of backward_max_block(1) threads,
// one an SM (two CTAs an SM ran 2-7% slower paced, 640 and 768 threads 4-8% at 4096 rows);
// contiguous plain rows (the residual form 0.3-0.6% slower); the cooperative launch's one chunk a
// CTA of `chunks` >= 2 chunks of at most `rows_per_chunk` rows (`grid` CTAs); and a largest chunk
// of at least kPaceMinIterations iterations of block / tpr row groups. On a 132-SM GPU: H 2048
// from 24,289 rows, H 4096 from 16,384 and H 7944-8192 from 6,073.
inline bool backward_pace(int vpt, int block, int tpr, int64_t heads, bool residual,
                          int64_t chunks, unsigned int grid, int64_t rows_per_chunk) {
  if (vpt != 1 || block < backward_max_block(1) || tpr < 1 || heads != 1 || residual ||
      chunks < 2 || static_cast<int64_t>(grid) != chunks) {
    return false;
  }
  const int64_t iteration_rows = int64_t{block / tpr} * backward_rows_per_group(1);
  return (rows_per_chunk + iteration_rows - 1) / iteration_rows >= kPaceMinIterations;
}

// The deepest cp.async ring a deterministic backward CTA of `block` threads takes for a call of
// `rows` rows (fewer stages where the device's shared memory does not fit them): two for the
// largest CTAs (backward_max_block(1), 1024 threads, one an SM: H 7944-8192, and the large calls'
// CTAs at H 2048 and 4096, step 97) from kBackwardLargeRows rows, where three (192 KB against
// two's 128 KB) fit on the H100 and H200; elsewhere the kernel's own depth (backward_stages:
// three for one vector a thread, two for more). Measured on an H100 SXM (docs/kernels.md, step
// 101; not yet on an H200), two stages against three, rows.py A T T A: 16384 x 2048 0.987,
// 16384 x 4096 0.991, 65536 x 2048 0.996, 65536 x 4096 0.995, 16384 x 8192 0.994; FP32 weights
// 0.984-0.990, the residual form 0.998-0.999. The one-cluster fold (three stages only) takes
// calls of a few chunks, far fewer rows.
inline int backward_max_stages(int block, int64_t rows) {
  return block >= backward_max_block(1) && rows >= kBackwardLargeRows ? 2 : 3;
}

// The CTAs of the deterministic backward's cooperative launch of `chunks` chunks when the device
// keeps `per_sm` CTAs an SM, `resident` in all, and the caller asks for `grid` (at most `chunks`).
// The chunk count is the package's, not the GPU's (dw's bits do not depend on the GPU), so a GPU
// that keeps fewer CTAs resident than there are chunks runs them in waves. Where one CTA fills an
// SM it takes the fewest CTAs that keep that number of waves, every CTA the same number of chunks
// or one fewer (132 chunks on 66-131 SMs: 66 CTAs of two), instead of every resident CTA with
// some taking a second chunk alone, at the rate of the few SMs still streaming. Measured with the
// grid forced on an H100 SXM at 16384 x 2048, 65536 x 4096 and 16384 x 6144 (docs/kernels.md,
// step 100): 114 CTAs (an H100 PCIe's) 1.47-1.55 times the 132-CTA time, 108 (an A100's)
// 1.42-1.48, 78 (an H20's) 1.28-1.33, 66 1.27-1.32 (12-17% less than 114); 44 CTAs of three
// level with 46. Where CTAs share an SM, or the grid fits, the grid stays as asked (at most
// `resident`). No bit of dx or dw depends on the CTA count.
inline unsigned int backward_wave_grid(unsigned int grid, int64_t chunks, unsigned int resident,
                                       int per_sm) {
  if (resident < 1) resident = 1;
  if (grid > resident) grid = resident;
  if (per_sm == 1 && chunks > static_cast<int64_t>(resident)) {
    const int64_t waves = (chunks + resident - 1) / resident;
    const int64_t balanced = (chunks + waves - 1) / waves;
    if (static_cast<int64_t>(grid) > balanced) grid = static_cast<unsigned int>(balanced);
  }
  return grid < 1 ? 1 : grid;
}

}  // namespace miles_rmsnorm
