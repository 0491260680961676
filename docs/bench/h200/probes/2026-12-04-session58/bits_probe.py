"""Session 58: the probe's row partitions (MEK_PROBE_ROW_BLOCK) checked on one build
(bwd_bits.check, the first mode the base): dx bits equal to the first mode's (mode -1: contiguous
chunks) in every mode, dw bits equal at the default grid and forced grids of 37 and 5 CTAs within
a mode, dw of every mode inside the budget against FP64 (1e-4 + 1e-4 |ref|) and its largest
difference from the first mode's. Prints one line a case, FAIL on a broken check.
  python bits_probe.py 16384x2048,4096x4096 -1,0,2"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bwd_bits import check  # noqa: E402

shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
modes = [(f"mode={m}", {"MEK_PROBE_ROW_BLOCK": m}) for m in sys.argv[2].split(",")]
check(shapes, modes, base_name="first", name="bits_probe")
