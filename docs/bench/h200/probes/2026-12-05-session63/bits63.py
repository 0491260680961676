"""Session 63: one build's outputs saved, then two builds' saved outputs compared bit for bit
(changes meant to keep every bit: group_sync.patch, param_round.patch). Cases: each shape plain
and residual, BF16 and FP32 weights, seeded inputs. The backward (dump): dx and dw at the default
grid and a forced grid of 37 CTAs. The forward (dumpf): y, rstd and, with a residual, h_new.
  python bits63.py dump out.pt 16384x2048,4096x4096
  python bits63.py dumpf out.pt 1x256,16x512
  python bits63.py cmp a.pt b.pt      # one line a case, then "bits63 failures: N"
"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward


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


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view({2: torch.int16, 4: torch.int32}[t.element_size()]).cpu()


def dumpf(path: str, shapes: str) -> None:
    out = {}
    for shape in shapes.split(","):
        t, h = (int(v) for v in shape.split("x"))
        for residual in (False, True):
            for w_dtype in (torch.bfloat16, torch.float32):
                gen = torch.Generator(device="cuda").manual_seed(t * 137 + h)
                x = torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
                u = (torch.randn(t, h, device="cuda", generator=gen).to(torch.bfloat16)
                     if residual else None)
                w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
                outs = rmsnorm_forward(x, w, 1e-6, residual=u, backend="first_party",
                                       strict=True)
                key = f"fwd {shape} res={int(residual)} w={str(w_dtype)[6:]}"
                out[key] = tuple(_bits(o) for o in outs)
    torch.save(out, path)
    print(f"dumped {len(out)} cases")


def cmp(a_path: str, b_path: str) -> None:
    a, b = torch.load(a_path), torch.load(b_path)
    failures = 0
    word = {True: "same", False: "DIFFERENT"}
    for key in a:
        equal = [torch.equal(x, y) for x, y in zip(a[key], b[key], strict=True)]
        failures += not all(equal)
        print(f"{key}: " + ", ".join(f"output {i} {word[e]}" for i, e in enumerate(equal)))
    print(f"bits63 failures: {failures}")


if __name__ == "__main__":
    {"dump": dump, "dumpf": dumpf, "cmp": cmp}[sys.argv[1]](*sys.argv[2:])
