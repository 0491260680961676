"""Session 37: torch.compile's forward kernels of the benchmark's FP32 formula (plain 65536 x
8192 and residual 16384 x 4096, BF16 weights), run once so that inductor writes its code; the
caller copies the caches."""
import torch

from benchmarks.rmsnorm.candidates import fp32_formula

for t, h, residual in ((65536, 8192, False), (16384, 4096, True)):
    torch._dynamo.reset()
    fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
    x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
    u = torch.randn(t, h, device="cuda", dtype=torch.bfloat16) if residual else None
    w = torch.rand(h, device="cuda", dtype=torch.bfloat16)
    fn(x, w, u)
    torch.cuda.synchronize()
    print("compiled", t, h, residual)
