"""Session 58: the deterministic backward against the atomic one (deterministic=False) of one
tree, in the harness's engine (CUDA graphs, L2 flush subtracted), plain BF16 rows.
  python nondet.py 16384x2048,16384x4096"""
import json
import sys

import torch

from benchmarks.rmsnorm import timing
from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_workspace

device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
out = {}
for shape in sys.argv[1].split(","):
    t, h = (int(v) for v in shape.split("x"))
    sets = []
    for _ in range(2):
        x = torch.randn(t, h, device=device, dtype=torch.bfloat16)
        w = torch.rand(h, device=device, dtype=torch.bfloat16) + 0.5
        sets.append((x, w, torch.randn_like(x),
                     torch.rand(t, device=device, dtype=torch.float32) + 0.5))
    ws = rmsnorm_workspace(h, device, weight_dtype=torch.bfloat16, backend="first_party",
                           strict=True)
    bodies = {}
    for det in (True, False):
        def body(i, det=det):
            x, w, g, rstd = sets[i]
            rmsnorm_backward(g, x, w, rstd, workspace=ws, deterministic=det,
                             backend="first_party", strict=True)
        bodies["det" if det else "atomic"] = body
    plan = timing.plan_samples(6 * t * h / 4.0e6 + 2.0, flush_us)
    stats, errors = timing.measure(bodies, timer, n_sets=2, plan=plan)
    if errors:
        raise SystemExit(errors)
    out[shape] = {k: round(v.median_us, 3) for k, v in stats.items()}
print(json.dumps(out))
