"""Session 63: dx and dw of one build saved, then two builds' saved outputs compared bit for bit
(a change meant to keep every bit: group_sync.patch). Cases: each shape plain and residual,
BF16 and FP32 weights, seeded inputs; at the default grid and a forced grid of 37 CTAs.
  python bits63.py dump out.pt 16384x2048,4096x4096
  python bits63.py cmp a.pt b.pt      # one line a case, then "bits63 failures: N"
"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward


def dump(path: str, shapes: str) -> None:
    out = {}
    for shape in shapes.split(","):
        t, h = (int(v) for v in shape.split("x"))
        for residual in (False, True):
            for w_dtype in (torch.bfloat16, torch.float32):
                gen = torch.Generator(device="cuda").manual_seed(t * 131 + h)
                x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
                g = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
                gh = (torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
                      if residual else None)
                w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
                rstd = torch.rand(t, device="cuda", generator=gen) + 0.5
                for grid in (None, 37):
                    dx, dw = rmsnorm_backward(g, x, w, rstd, g_residual=gh, grid=grid,
                                              backend="first_party", strict=True)
                    key = f"{shape} res={int(residual)} w={str(w_dtype)[6:]} grid={grid}"
                    out[key] = (dx.view(torch.int16).cpu(), dw.view(torch.int32).cpu())
    torch.save(out, path)
    print(f"dumped {len(out)} cases")


def cmp(a_path: str, b_path: str) -> None:
    a, b = torch.load(a_path), torch.load(b_path)
    failures = 0
    for key in a:
        dx_eq = torch.equal(a[key][0], b[key][0])
        dw_eq = torch.equal(a[key][1], b[key][1])
        failures += not (dx_eq and dw_eq)
        word = {True: "same", False: "DIFFERENT"}
        print(f"{key}: dx {word[dx_eq]}, dw {word[dw_eq]}")
    print(f"bits63 failures: {failures}")


if __name__ == "__main__":
    {"dump": dump, "cmp": cmp}[sys.argv[1]](*sys.argv[2:])
