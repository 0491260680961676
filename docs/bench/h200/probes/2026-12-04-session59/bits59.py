"""Session 59: probe modes' dx and dw checked against the build's default (bwd_bits.check). Modes
are environment settings "label:VAR=VAL,VAR=VAL".
  python bits59.py 16384x2048,4096x4096 "b1024:MEK_PROBE_BLOCK=1024,MEK_PROBE_MAX_CHUNKS=132" """
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bwd_bits import check  # noqa: E402

shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
modes = [("default", {})]
for spec in sys.argv[2:]:
    label, _, pairs = spec.partition(":")
    modes.append((label, dict(p.split("=", 1) for p in pairs.split(",") if p)))
check(shapes, modes, base_name="default", name="bits59")
