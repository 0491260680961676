"""Session 40: dx and dw of the first-party deterministic backward on shapes a block-stealing
build takes. `save FILE`: dx bits of this build (the reference build). `check FILE`: dx bits
equal to the saved ones; dw bits equal over repeats and forced grids; dw within the issue's
budget of an FP64 reference (|dw - ref| <= 1e-4 + 1e-4 |ref|).
  python steal_check.py save|check FILE 16384x4096,4096x4096 [bf16|fp32]"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
w_dtype = torch.float32 if len(sys.argv) > 4 and sys.argv[4] == "fp32" else torch.bfloat16
saved = {} if mode == "save" else torch.load(path)
problems = []
for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t * 131 + h)
    x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    g = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
    rstd = torch.rand(t, device="cuda", generator=gen) + 0.5
    dx, dw = rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True)
    if mode == "save":
        saved[shape] = dx.view(torch.int16).cpu()
        continue
    if not torch.equal(dx.view(torch.int16).cpu(), saved[shape]):
        problems.append(f"{shape}: dx bits differ from the reference build")
    bits = dw.view(torch.int32).clone()
    for grid in (None, None, 37, 131, 264, 1):
        _, dw2 = rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True, grid=grid)
        if not torch.equal(dw2.view(torch.int32), bits):
            problems.append(f"{shape}: dw bits differ at grid {grid}")
    ref = (g.double() * (x.double() * rstd.double()[:, None])).sum(0)
    err = (dw.double() - ref).abs() - (1e-4 + 1e-4 * ref.abs())
    if err.max().item() > 0:
        problems.append(f"{shape}: dw outside the budget by {err.max().item():.3g}")
if mode == "save":
    torch.save(saved, path)
    print("saved", len(saved))
else:
    print("check", "OK on all" if not problems else problems, len(shapes))
