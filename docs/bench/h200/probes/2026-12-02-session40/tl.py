"""Session 40: one timeline of the deterministic backward per shape (a probe build that prints
each CTA's start, SM, end of rows and end of fold to stderr when MILES_TIMELINE=1), after three
untimed calls.  python tl.py 16384x4096,16384x2048 2> timeline.txt"""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

for shape in sys.argv[1].split(","):
    t, h = (int(v) for v in shape.split("x"))
    x = torch.randn(t, h, device="cuda").to(torch.bfloat16)
    g = torch.randn(t, h, device="cuda").to(torch.bfloat16)
    w = (torch.rand(h, device="cuda") + 0.5).to(torch.bfloat16)
    rstd = torch.rand(t, device="cuda") + 0.5
    for _ in range(3):
        rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True)
    torch.cuda.synchronize()
    os.environ["MILES_TIMELINE"] = "1"
    for _ in range(2):
        rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True)
    del os.environ["MILES_TIMELINE"]
    torch.cuda.synchronize()
