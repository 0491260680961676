"""Writes bsmall_stamped.cuh: session 22's stamped copy of the small-batch backward kernel.

The copy is the package's backward_small_kernel as of commit 8925380 (read with `git show`),
renamed stamped_kernel, with %globaltimer stamps held in registers (stored by thread 0 of each
CTA at the end) and a template flag PREFETCH that selects the branch-free batch loads measured in
call 10 (step 50's first build: its loads, read from commit 81f4ba5, with the values masked right
after them; call 10 ran them written out, `rr` for `at`). Usage, from the
repository root: python3 docs/bench/h200/probes/2026-12-01-session22/make_stamped.py OUT
"""

import subprocess
import sys

SOURCE = "miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_small.cuh"

PROLOGUE = r'''// Session 22 probe: the package's backward_small_kernel with globaltimer stamps held in
// registers and stored by thread 0 of each CTA at the end: 0 entry, 1 first batch's loads issued,
// 2 barriers set up, 3 first batch's dot reduced in the warp (its loads landed), 4 its exchange
// done, 5 its first row's dx, 6 every batch's dx, 7 dw done.
#pragma once
#include "miles_rmsnorm/backward_small.cuh"
__device__ unsigned long long* g_stamps;
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after(float v) {
  unsigned long long t;
  asm volatile("{.reg .f32 q; mov.f32 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "f"(v) : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after_d(double v) {
  unsigned long long t;
  asm volatile("{.reg .f64 q; mov.f64 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "d"(v) : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtime_after_i(int v) {
  unsigned long long t;
  asm volatile("{.reg .s32 q; mov.s32 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "r"(v) : "memory");
  return t;
}
namespace miles_rmsnorm {
'''

# The values masked right after step 50's loads (its first build, measured in call 10), and the
# template flag PREFETCH choosing them over the kernel's own loads.
MASKED = r'''#pragma unroll
    for (int i = 0; i < B; ++i) {
      const bool use = valid[i] && live;
      r[i] = valid[i] ? r[i] : 0.0f;
      const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
      batch.g[i] = use ? batch.g[i] : zero;
      batch.x[i] = use ? batch.x[i] : zero;
    }
  };
  auto load_batch = [&](int base) {
    if constexpr (PREFETCH) {
      load_batch_flat(base);
    } else {
      load_batch_branchy(base);
    }
  };
'''


def replace_once(text: str, old: str, new: str) -> str:
    """text with its one occurrence of old replaced by new."""
    if text.count(old) != 1:
        raise SystemExit(f"expected one occurrence of {old[:60]!r}")
    return text.replace(old, new)


def package_header(commit: str) -> str:
    """The package's small-batch header at commit (git show)."""
    return subprocess.run(["git", "show", f"{commit}:{SOURCE}"], check=True,
                          capture_output=True, text=True).stdout


def flat_loads() -> str:
    """Step 50's branch-free loads (commit 81f4ba5) as load_batch_flat, the values masked."""
    header = package_header("81f4ba5")
    start = header.index("  auto load_batch = [&](int base) {")
    commit = "    if (residual) cp_async_commit();\n"
    end = header.index(commit, start) + len(commit)
    loads = header[start:end].replace("auto load_batch =", "auto load_batch_flat =")
    return loads + MASKED


def kernel_copy(header: str, name: str, parameter: str, entry: str) -> str:
    """The package header's backward_small_kernel renamed `name`, with the template parameter
    `parameter` added last and the lines `entry` at its top (session 23's make_tail.py too)."""
    start = header.index("template <typename XT, typename WT, int B, bool RESIDUAL, bool MULTI, "
                         "int CONTRACT>\n__global__")
    k = header[start:header.rindex("}  // namespace miles_rmsnorm")]
    k = replace_once(k, "backward_small_kernel(", f"{name}(")
    k = replace_once(k, "int CONTRACT>\n__global__", f"int CONTRACT, {parameter}>\n__global__")
    cg = "  namespace cg = cooperative_groups;\n"
    return replace_once(k, cg, cg + entry)


def stamped(header: str) -> str:
    """The stamped header from the package header's text."""
    k = kernel_copy(header, "stamped_kernel", "bool PREFETCH = false",
                    "  unsigned long long st[12];\n  st[0] = gtime();\n  st[8] = clock64();\n")
    k = replace_once(k, "  RegisterWeights<WT, 1> w;",
                     "  st[10] = gtime_after_i(end + j + row_warp + static_cast<int>(batch_bytes));"
                     "\n  RegisterWeights<WT, 1> w;")
    k = replace_once(k, "  int row[B];\n", "  st[11] = gtime();\n  int row[B];\n")
    k = replace_once(k, "  auto load_batch = [&](int base) {", "  auto load_batch_branchy = [&](int base) {")
    k = replace_once(k, "  load_batch(first);\n", flat_loads() + "  load_batch(first);\n  st[1] = gtime();\n")
    k = replace_once(k, "  double acc[1][8];", "  st[2] = gtime();\n  double acc[1][8];")
    k = replace_once(k, "    lane_sums_once<B>(dot, s.tpr < 32 ? s.tpr : 32);",
                     "    lane_sums_once<B>(dot, s.tpr < 32 ? s.tpr : 32);\n"
                     "    if (batch_index == 0) st[3] = gtime_after(dot[0]);")
    k = replace_once(k, "      sum_received<B>(slot, s, row_warp, lane, dot);",
                     "      sum_received<B>(slot, s, row_warp, lane, dot);\n"
                     "      if (batch_index == 0) st[4] = gtime_after(dot[0]);")
    k = replace_once(k, "                              residual, cast);",
                     "                              residual, cast);\n"
                     "      if (batch_index == 0 && i == 0) st[5] = gtime_after_d(acc[0][0]);")
    k = replace_once(k, "  if (exchange && batch_index == 0) cluster_wait();",
                     "  st[6] = gtime_after_d(acc[0][0]);\n"
                     "  if (exchange && batch_index == 0) cluster_wait();")
    k = replace_once(k, "  write_small_dw<MULTI>(p, s, acc[0], block_sums, cluster, cta, t, group, j, live);",
                     "  write_small_dw<MULTI>(p, s, acc[0], block_sums, cluster, cta, t, group, j, live);\n"
                     "  st[7] = gtime();\n  st[9] = clock64();\n  if (threadIdx.x == 0) {\n"
                     "#pragma unroll\n"
                     "    for (int q = 0; q < 12; ++q) g_stamps[blockIdx.x * 16 + q] = st[q];\n  }")
    return PROLOGUE + k + "}  // namespace miles_rmsnorm\n"


def generate(commit: str, transform, path: str) -> None:
    """Writes transform(the package header at commit) to path (session 23's make_tail.py too)."""
    with open(path, "w") as out:
        out.write(transform(package_header(commit)))


if __name__ == "__main__":
    generate("8925380", stamped, sys.argv[1])
