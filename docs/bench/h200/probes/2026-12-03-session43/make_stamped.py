"""Session 43 (from session 42's): writes a stamped copy of the working tree's backward_row_column.cuh into
OUT/miles_rmsnorm/ (put OUT first on the include path). Thread 0 of each CTA stores %globaltimer
into g_stamps[cta * 8 + k]: 0 entry; column CTAs 1 the register batch added (its loads landed),
2 the staged rows added (the task's sums), 3 past the cluster wait (the block's row groups added;
its pushes next), 4 every peer's sums received, 6 dw stored; row CTAs 7 dx stored; every CTA 5 its
SM (%smid + 1).
With "cheap" (timing only, wrong dw): a task's rows are folded into acc by an XOR of their
loaded words instead of the FP64 products (the loads and the exchange without the arithmetic).
Usage: python3 make_stamped.py OUT [cheap]"""
import sys
from pathlib import Path

SRC = Path("miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_row_column.cuh")
PROLOGUE = r'''#pragma once
__device__ unsigned long long g_stamps[8192 * 8];
__device__ __forceinline__ unsigned long long mek_gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ unsigned long long mek_gtime_after(double v) {
  unsigned long long t;
  asm volatile("{.reg .f64 q; mov.f64 q, %1; mov.u64 %0, %%globaltimer;}" : "=l"(t) : "d"(v)
               : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long mek_smid() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id + 1ull;
}
#define MEK_STAMP(k) \
  if (threadIdx.x == 0) g_stamps[blockIdx.x * 8 + (k)] = mek_gtime()
#define MEK_STAMP_AFTER(k, v) \
  if (threadIdx.x == 0) g_stamps[blockIdx.x * 8 + (k)] = mek_gtime_after(v)
'''

src = SRC.read_text().replace("#pragma once\n", PROLOGUE, 1)


def after(anchor: str, text: str) -> None:
    global src
    if src.count(anchor) != 1:
        raise SystemExit(f"anchor not unique: {anchor[:70]!r}")
    src = src.replace(anchor, anchor + text)


after("  float* partials = reinterpret_cast<float*>(sums);"
      "  // the row CTAs' (no column work there)\n",
      "  MEK_STAMP(0);\n  if (threadIdx.x == 0) g_stamps[blockIdx.x * 8 + 5] = mek_smid();\n")
after("    row_cta_dx<XT, WT, RESIDUAL>(p, s, row, row < p.rows, group, j, partials);\n",
      "    MEK_STAMP(7);\n")
after("    add_column_rows<XT, B, CAST>(rows, acc);\n    if (staged) {\n", "")
src = src.replace("    add_column_rows<XT, B, CAST>(rows, acc);\n    if (staged) {\n",
                  "    add_column_rows<XT, B, CAST>(rows, acc);\n"
                  "    if (n0 == 0) MEK_STAMP_AFTER(1, acc[0]);\n    if (staged) {\n")
after("      // No later copy into these slots before the reads above have their values.\n",
      "      if (n0 == 0) MEK_STAMP_AFTER(2, acc[0]);\n")
after("  cluster_wait();  // every peer's barrier is initialised\n", "  MEK_STAMP(3);\n")
after("  barrier_wait(local_bar, 0);\n", "  MEK_STAMP(4);\n")
after("      column_cluster_dw<XT, B, false>(p, s, rc, sums);\n    }\n",
      "    MEK_STAMP(6);\n")
if len(sys.argv) > 2 and sys.argv[2] == "cheap":
    old = """      accumulate(acc[e], dw_product<XT, CAST>(gk, xk, ri), scale);
"""
    new = """      (void)gk; (void)xk; (void)scale;
      acc[e] = __longlong_as_double(__double_as_longlong(acc[e]) ^
                                    (long long)(rows.g[i].x ^ rows.x[i].y ^ __float_as_uint(ri)));
"""
    if src.count(old) != 1:
        raise SystemExit("cheap: anchor")
    src = src.replace(old, new)
out = Path(sys.argv[1]) / "miles_rmsnorm"
out.mkdir(parents=True, exist_ok=True)
(out / "backward_row_column.cuh").write_text(src)
print(f"stamped: {out / 'backward_row_column.cuh'}")
