"""Session 76: forward calls for ncu (argv: T H weight dtype bf16|fp32), the third one profiled."""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

t, h = int(sys.argv[1]), int(sys.argv[2])
w_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[sys.argv[3]]
x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
w = torch.rand(h, device="cuda", dtype=w_dtype) + 0.5
for _ in range(3):
    rmsnorm_forward(x, w, backend="first_party", strict=True)
torch.cuda.synchronize()
