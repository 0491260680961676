"""Session 30 probe builds of the row-and-column kernel with the column clusters (timing only, wrong
dw): write a variant of backward_row_column.cuh into the tree given.
  rows_only: the column CTAs leave at once (row CTAs alone, in the cluster launch);
  columns_only: the row CTAs leave at once (column clusters alone);
  no_fold: the column clusters skip both cluster barriers and the remote fold (each CTA writes its
  block's sums: the cluster launch without its exchange)."""
import sys
from pathlib import Path

tree, variant = Path(sys.argv[1]), sys.argv[2]
path = tree / "miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_row_column.cuh"
src = path.read_text()


def swap(old: str, new: str) -> None:
    global src
    assert src.count(old) == 1, old
    src = src.replace(old, new)


if variant == "rows_only":
    swap("  const bool cast = (p.flags & kCastBeforeWeightMul) != 0;\n",
         "  if (p.rows > 0) return;\n  const bool cast = (p.flags & kCastBeforeWeightMul) != 0;\n")
elif variant == "columns_only":
    swap("    row_cta_dx<XT, WT, RESIDUAL>(p, s, row, row < p.rows, group, j, partials);\n",
         "    if (p.rows < 0) row_cta_dx<XT, WT, RESIDUAL>(p, s, row, row < p.rows, group, j,"
         " partials);\n")
elif variant == "no_fold":
    swap("  cluster_sync();\n  // The blocks in cluster order", "  // The blocks in cluster order")
    swap("      double sum = load_remote_double(cluster_address(local, 0u));\n"
         "      for (int c = 1; c < s.clusters; ++c) {\n"
         "        sum += load_remote_double(cluster_address(local, static_cast<uint32_t>(c)));\n"
         "      }\n",
         "      double sum = sums[column_slot(v, e)] + (local == 1u ? 1.0 : 0.0);\n")
    swap("  cluster_arrive_relaxed();\n  cluster_wait();\n}", "}")
else:
    raise SystemExit(f"unknown variant {variant}")
path.write_text(src)
print(f"{variant}: {path}")
