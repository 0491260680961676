"""Session 41: one op of the first-party program timed with the harness's engine (CUDA graphs,
the harness's L2 flush subtracted), session 34's rows.py with per-head families. Prints one JSON
line {"T x H": median us}.
  python rows.py fwd|bwd plain|residual|phs|phc bf16|fp32 4096x896,16384x1536
phs: x = [T, 32, H][:, :24] (rows T * 24); phc: [T, 4, H] contiguous (rows T * 4)."""
import json
import sys

import torch

from benchmarks.rmsnorm import timing
from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward, rmsnorm_workspace

op, family, w_name, shapes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
n_sets = 2
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
w_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[w_name]
residual = family == "residual"
out = {}


def act(t, h):
    if family == "phs":
        return torch.randn(t, 32, h, device=device, dtype=torch.bfloat16)[:, :24]
    if family == "phc":
        return torch.randn(t, 4, h, device=device, dtype=torch.bfloat16)
    return torch.randn(t, h, device=device, dtype=torch.bfloat16)


for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    rows = t * (24 if family == "phs" else 4 if family == "phc" else 1)
    sets = []
    for _ in range(n_sets):
        x = act(t, h)
        u = act(t, h) if residual else None
        w = torch.rand(h, device=device, dtype=w_dtype) + 0.5
        g = torch.randn_like(x)
        gh = torch.randn_like(x) if residual else None
        rstd = torch.rand(x.shape[:-1], device=device, dtype=torch.float32) + 0.5
        sets.append((x, u, w, g, gh, rstd))
    workspace = (rmsnorm_workspace(h, device, residual=residual, weight_dtype=w_dtype,
                                   backend="first_party", strict=True) if op == "bwd" else None)

    def body(i, sets=sets, workspace=workspace):
        x, u, w, g, gh, rstd = sets[i]
        if op == "fwd":
            rmsnorm_forward(x, w, residual=u, backend="first_party", strict=True)
        else:
            rmsnorm_backward(g, x, w, rstd, g_residual=gh, workspace=workspace,
                             backend="first_party", strict=True)

    bytes_moved = (4 if op == "fwd" else 6) * rows * h
    plan = timing.plan_samples(bytes_moved / 4.0e6 + 2.0, flush_us)
    stats, errors = timing.measure({"ours": body}, timer, n_sets=n_sets, plan=plan)
    if errors:
        raise SystemExit(errors)
    out[shape] = round(stats["ours"].median_us, 3)
print(json.dumps(out))
