// miles-ext-kernels first-party RMSNorm: the deterministic backward launcher's measured choices of
// kernel instance (host code). None changes a bit of dx or dw (the instances have the same
// arithmetic and the same chunk partition), only how long a call takes; the numbers are the
// H200's (docs/kernels.md, step 74).
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

}  // namespace miles_rmsnorm
