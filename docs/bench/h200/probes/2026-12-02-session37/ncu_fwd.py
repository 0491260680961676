"""Session 37: one profiled launch each of our forward and torch.compile's (the benchmark's FP32
formula) at plain 65536 x 8192 and residual 16384 x 4096, BF16 weights, for
`ncu --profile-from-start off`: everything before torch.cuda.profiler.start() is warm-up."""
import torch

from benchmarks.rmsnorm.candidates import fp32_formula
from miles_ext_kernels.cake import rmsnorm_forward

runs = []
for t, h, residual in ((65536, 8192, False), (16384, 4096, True)):
    x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
    u = torch.randn(t, h, device="cuda", dtype=torch.bfloat16) if residual else None
    w = torch.rand(h, device="cuda", dtype=torch.bfloat16) + 0.5
    torch._dynamo.reset()
    fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
    for _ in range(3):
        fn(x, w, u)
        rmsnorm_forward(x, w, residual=u, backend="first_party", strict=True)
    runs.append((fn, x, w, u))
torch.cuda.synchronize()
torch.cuda.profiler.start()
for fn, x, w, u in runs:
    rmsnorm_forward(x, w, residual=u, backend="first_party", strict=True)
    fn(x, w, u)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("done")
