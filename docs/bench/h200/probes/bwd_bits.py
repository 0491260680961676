"""Shared by the backward's bit probes (sessions 58-59): each mode's dx and dw checked against the
first mode's on one build. A mode is a label and environment settings (the probe builds' switches,
read at each launch or routing decision; the dispatch and workspace caches are cleared between
modes). Per case: dx bits equal to the first mode's, dw bits equal at the default grid and forced
grids of 37 and 5 CTAs, dw inside the budget of an FP64 reference (1e-4 + 1e-4 |ref|) and its
largest difference from the first mode's. One line a case, FAIL on a broken check. A probe in a
session directory imports it after ``sys.path.insert(0, <this directory>)``."""
import os

import torch

from miles_ext_kernels.cake import dispatch, rmsnorm_backward
from miles_ext_kernels.cake.backends import programs

FP = {"backend": "first_party", "strict": True}


def _set_mode(env: dict, modes: list) -> None:
    for _, other in modes:
        for key in other:
            os.environ.pop(key, None)
    os.environ.update(env)
    dispatch.clear_caches()
    programs.clear_workspace_cache()


def check(shapes: list, modes: list, *, base_name: str, name: str) -> int:
    """Checks ``modes`` ([(label, {VAR: VALUE})], the first the base) on every shape (T, H),
    plain and residual, BF16 and FP32 weights; prints a line a case and ``<name> failures: N``;
    returns N. ``base_name`` names the base in the lines' dw difference."""
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
                ref = (g.double() * (x.double() * rstd.double()[:, None])).sum(0)
                base = None
                for label, env in modes:
                    _set_mode(env, modes)
                    dx, dw = rmsnorm_backward(g, x, w, rstd, g_residual=gh, **FP)
                    ok = True
                    for grid in (37, 5):
                        dx2, dw2 = rmsnorm_backward(g, x, w, rstd, g_residual=gh, grid=grid,
                                                    **FP)
                        ok &= torch.equal(dw2, dw) and torch.equal(dx2, dx)
                    err = ((dw.double() - ref).abs() - (1e-4 + 1e-4 * ref.abs())).max().item()
                    if base is None:
                        base = (dx, dw)
                    same_dx = torch.equal(dx, base[0])
                    diff = (dw - base[1]).abs().max().item()
                    fail = not (ok and same_dx and err <= 0)
                    bad += fail
                    print(f"{'FAIL' if fail else 'ok'} {t}x{h} res={residual} w={w_dtype} "
                          f"{label} grids_equal={ok} dx_equal={same_dx} budget_margin={err:.3g} "
                          f"dw_diff_vs_{base_name}={diff:.3g}")
    _set_mode({}, modes)
    print(f"{name} failures:", bad)
    return bad
