"""Session 58: the probe's row partitions (MEK_PROBE_ROW_BLOCK) checked on one build: dx bits equal
to contiguous chunks' (mode -1) in every mode, dw bits equal at the default grid and forced grids
of 37 and 5 CTAs within a mode, dw of every mode inside the budget against FP64 (1e-4 + 1e-4 |ref|)
and its largest difference from mode -1's. Prints one line a case, FAIL on a broken check.
  python bits_probe.py 16384x2048,4096x4096 -1,0,2"""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
modes = sys.argv[2].split(",")
FP = {"backend": "first_party", "strict": True}
bad = 0
for t, h in shapes:
    for residual in (False, True):
        for w_dtype in (torch.bfloat16, torch.float32):
            torch.manual_seed(t + h)
            x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
            w = (torch.rand(h, device="cuda") + 0.5).to(w_dtype)
            g = torch.randn_like(x)
            gh = torch.randn_like(x) if residual else None
            rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
            xhat = x.double() * rstd.double()[:, None]
            ref = (g.double() * xhat).sum(0)
            base = None
            for m in modes:
                os.environ["MEK_PROBE_ROW_BLOCK"] = m
                dx, dw = rmsnorm_backward(g, x, w, rstd, g_residual=gh, **FP)
                ok = True
                for grid in (37, 5):
                    dx2, dw2 = rmsnorm_backward(g, x, w, rstd, g_residual=gh, grid=grid, **FP)
                    ok &= torch.equal(dw2, dw) and torch.equal(dx2, dx)
                err = ((dw.double() - ref).abs() - (1e-4 + 1e-4 * ref.abs())).max().item()
                if base is None:
                    base = (dx, dw)
                same_dx = torch.equal(dx, base[0])
                diff = (dw - base[1]).abs().max().item()
                fail = not (ok and same_dx and err <= 0)
                bad += fail
                print(f"{'FAIL' if fail else 'ok'} {t}x{h} res={residual} w={w_dtype} mode={m} "
                      f"grids_equal={ok} dx_equal={same_dx} budget_margin={err:.3g} "
                      f"dw_diff_vs_first={diff:.3g}")
print("bits_probe failures:", bad)
