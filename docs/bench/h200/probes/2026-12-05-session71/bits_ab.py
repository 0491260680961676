"""Session 71: dx and dw of one build saved, or compared bit for bit with a saved file, on the
shapes a backward variant changes (plain and residual, BF16 and FP32 weights, the default and the
cast-before-weight-mul contract; the deterministic program at its own grid and a forced grid of
37 CTAs). Prints one line a case and exits 1 on any differing bit.
  python bits_ab.py save|compare FILE 16384x2048,4096x2048"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

FP = {"backend": "first_party", "strict": True}
mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
results = {}
for shape in shapes:
    t, h = map(int, shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t + h)
    x = torch.randn(t, h, device="cuda", generator=gen).bfloat16()
    g = torch.randn(t, h, device="cuda", generator=gen).bfloat16()
    gh = torch.randn(t, h, device="cuda", generator=gen).bfloat16()
    rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
    for w_dtype in (torch.bfloat16, torch.float32):
        w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
        for residual in (None, gh):
            for cast in (False, True):
                for grid in (None, 37):
                    key = f"{shape} w={w_dtype} residual={residual is not None} cast={cast} grid={grid}"
                    extra = {} if grid is None else {"grid": grid}
                    dx, dw = rmsnorm_backward(g, x, w, rstd, g_residual=residual,
                                              cast_before_weight_mul=cast, **extra, **FP)
                    results[key] = (dx.cpu(), dw.cpu())
if mode == "save":
    torch.save(results, path)
    print(f"saved {len(results)} cases")
    sys.exit(0)
base = torch.load(path)
bad = 0
for key, (dx, dw) in results.items():
    same = torch.equal(dx, base[key][0]) and torch.equal(dw, base[key][1])
    bad += not same
    if not same:
        print("DIFF", key)
print(f"compared {len(results)} cases, {bad} differ")
sys.exit(1 if bad else 0)
