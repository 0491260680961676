"""Session 35: dx and dw of the first-party backward on a list of shapes, saved to (or compared
with) a file, so that two builds' bits can be compared.
  python bits.py save|compare FILE 16384x4096,1024x4096 [plain|residual] [bf16|fp32]"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
residual = len(sys.argv) > 4 and sys.argv[4] == "residual"
w_dtype = torch.float32 if len(sys.argv) > 5 and sys.argv[5] == "fp32" else torch.bfloat16
out = {}
for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t * 131 + h)
    x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    g = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    gh = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16) if residual else None
    w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
    rstd = torch.rand(t, device="cuda", generator=gen) + 0.5
    for grid in (None, 37):
        dx, dw = rmsnorm_backward(g, x, w, rstd, g_residual=gh, backend="first_party",
                                  strict=True, grid=grid)
        key = shape if grid is None else f"{shape} grid {grid}"
        out[key] = (dx.view(torch.int16).cpu(), dw.float().view(torch.int32).cpu())
if mode == "save":
    torch.save(out, path)
    print("saved", len(out))
else:
    ref = torch.load(path)
    bad = [k for k in out if not (torch.equal(out[k][0], ref[k][0]) and torch.equal(out[k][1], ref[k][1]))]
    print("bits", "equal on all" if not bad else f"DIFFER on {bad}", len(out))
