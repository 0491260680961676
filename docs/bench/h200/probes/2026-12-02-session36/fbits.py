"""Session 36: y and rstd of the first-party forward on a list of shapes, saved to (or compared
with) a file, so that two builds' bits can be compared.
  python fbits.py save|compare FILE 64x8192,48x6144 [bf16|fp32]"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
w_dtype = torch.float32 if len(sys.argv) > 4 and sys.argv[4] == "fp32" else torch.bfloat16
out = {}
for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t * 131 + h)
    x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
    y, rstd = rmsnorm_forward(x, w, backend="first_party", strict=True)[:2]
    out[shape] = (y.view(torch.int16).cpu(), rstd.view(torch.int32).cpu())
if mode == "save":
    torch.save(out, path)
    print("saved", len(out))
else:
    ref = torch.load(path)
    bad = [k for k in out if not all(torch.equal(a, b) for a, b in zip(out[k], ref[k]))]
    print("bits", "equal on all" if not bad else f"DIFFER on {bad}", len(out))
