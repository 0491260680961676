"""Session 40: one timeline of the deterministic backward per shape (a probe build that prints
each CTA's stamps to stderr when MILES_TIMELINE=1), after three untimed calls; TIMED timed calls
(2), each after a FLUSH_MB fill of the L2 (0: none; session 59 used 3 calls after 256 MB).
  python tl.py 16384x4096,16384x2048 [TIMED [FLUSH_MB]] 2> timeline.txt"""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

timed = int(sys.argv[2]) if len(sys.argv) > 2 else 2
flush_mb = int(sys.argv[3]) if len(sys.argv) > 3 else 0
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
    for _ in range(timed):
        if flush_mb:
            torch.empty(flush_mb << 18, device="cuda", dtype=torch.float32).fill_(1.0)
        rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True)
    del os.environ["MILES_TIMELINE"]
    torch.cuda.synchronize()
