"""Session 52: ours (first-party) and torch.compile's FP32 formula, each called after warm-up, for
ncu to profile (shape from argv: T H bf16|fp32; `--only ours|compile`). The compiled function runs
with grad enabled, as the harness's autograd candidate does, so its forward writes the rstd too."""
import sys

import torch

from benchmarks.rmsnorm.candidates import fp32_formula
from miles_ext_kernels.cake import rmsnorm_forward

t, h = int(sys.argv[1]), int(sys.argv[2])
w_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[sys.argv[3]]
only = sys.argv[5] if len(sys.argv) > 5 else "both"
x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
w = torch.rand(h, device="cuda", dtype=w_dtype) + 0.5
if only in ("both", "ours"):
    for _ in range(3):
        rmsnorm_forward(x, w, backend="first_party", strict=True)
if only in ("both", "compile"):
    fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
    xg = x.detach().requires_grad_(True)
    wg = w.detach().requires_grad_(True)
    for _ in range(3):
        fn(xg, wg, None)
torch.cuda.synchronize()
