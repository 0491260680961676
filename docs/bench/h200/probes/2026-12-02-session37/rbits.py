"""Session 37: y, rstd and (with a residual) h_new of the first-party forward on a list of shapes,
saved to (or compared with) a file, so that two builds' bits can be compared.
  python rbits.py save|compare FILE 64x6144,48x4096 [plain|residual] [bf16|fp32]"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
residual = len(sys.argv) > 4 and sys.argv[4] == "residual"
w_dtype = torch.float32 if len(sys.argv) > 5 and sys.argv[5] == "fp32" else torch.bfloat16
out = {}
for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t * 131 + h)
    x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
    u = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16) if residual else None
    w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
    res = rmsnorm_forward(x, w, residual=u, backend="first_party", strict=True)
    tensors = [res[0], res[1]] + ([res[2]] if residual else [])
    out[shape] = tuple(o.view(torch.int16 if o.element_size() == 2 else torch.int32).cpu()
                       for o in tensors)
if mode == "save":
    torch.save(out, path)
    print("saved", len(out))
else:
    ref = torch.load(path)
    bad = [k for k in out
           if not all(torch.equal(a, b) for a, b in zip(out[k], ref[k], strict=True))]
    print("bits", "equal on all" if not bad else f"DIFFER on {bad}", len(out))
