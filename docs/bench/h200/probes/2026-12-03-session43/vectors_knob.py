"""Session 43: gives a copy of the repository (TREE) a probe knob: MEK_PROBE_COLUMN_VECTORS=v makes
row_column_shape (config.h) give column clusters v vectors a cluster instead of its own choice,
so that the column CTAs spread over more SMs (the same additions in the same order: dw keeps its
bits). Rewrites build.json's digests. Usage: python3 vectors_knob.py TREE"""
import subprocess
import sys
from pathlib import Path

tree = Path(sys.argv[1])
config = tree / "miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/config.h"
src = config.read_text()
anchor = "  rc.column_ctas = (nv + rc.vectors - 1) / rc.vectors * rc.cluster;\n"
knob = """  if (rc.cluster > 1 && std::getenv("MEK_PROBE_COLUMN_VECTORS") != nullptr) {
    rc.vectors = std::atoi(std::getenv("MEK_PROBE_COLUMN_VECTORS"));
  }
"""
if src.count(anchor) != 1 or src.count("#pragma once\n") != 1:
    raise SystemExit("config.h: anchor")
src = src.replace(anchor, knob + anchor).replace("#pragma once\n", "#pragma once\n#include <cstdlib>\n")
config.write_text(src)
subprocess.run([sys.executable, "tools/gen_kernel_build_json.py"], cwd=tree, check=True,
               stdout=subprocess.DEVNULL)
print(f"knob: {config}")
