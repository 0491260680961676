"""Session 65 (prepared): the deterministic backward on an H200 with its grid forced to what
GPUs with fewer SMs keep co-resident, to price the second wave of chunks they run.

The chunk count is a package constant (264 chunks where two CTAs share an SM, 132 where one
fills it: two and one for every SM of a 132-SM H100 / H200), so dw's bits never depend on the
GPU. A GPU that keeps fewer CTAs resident (A100: 108 SMs, H100 PCIe: 114, H20: 78) runs the
chunks past its resident CTAs in a second wave. Forcing the grid (rmsnorm_backward's `grid`
hook, which the launcher still clamps to what the device keeps resident) reproduces that
wave on the H200: the same chunks and bits, fewer CTAs. The H200's DRAM is not the other GPUs'
DRAM, so the ratio to the default grid is the reading, not the times.

  python grid_waves.py 16384x2048,65536x4096,16384x3072 none,264,228,216,156,132,114,108,78

Prints, per shape, one JSON line: {"shape": ..., "us": {grid: median}, "launched": {grid: CTAs},
"dw_equal": true}. `launched` is the CTA count the launcher used (from the profiler's trace);
dw_equal: dw's bits equal to the default grid's at every grid (the guarantee, checked on the
way).
"""
import json
import os
import sys

import torch

from benchmarks.rmsnorm import timing
from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_workspace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import launched_grid  # noqa: E402

shapes = sys.argv[1].split(",")
grids = [None if v == "none" else int(v) for v in sys.argv[2].split(",")]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
n_sets = 2


for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    sets = []
    for _ in range(n_sets):
        x = torch.randn(t, h, device=device, dtype=torch.bfloat16)
        w = torch.rand(h, device=device, dtype=torch.bfloat16) + 0.5
        g = torch.randn_like(x)
        rstd = torch.rand(t, device=device, dtype=torch.float32) + 0.5
        sets.append((x, w, g, rstd))
    workspace = rmsnorm_workspace(h, device, weight_dtype=torch.bfloat16,
                                  backend="first_party", strict=True)
    plan = timing.plan_samples(6 * t * h / 4.0e6 + 2.0, flush_us)

    def body(i, grid, sets=sets, workspace=workspace):
        x, w, g, rstd = sets[i]
        return rmsnorm_backward(g, x, w, rstd, workspace=workspace, backend="first_party",
                                strict=True, grid=grid)[1]

    dw_ref = body(0, None).clone()
    us, launched, equal = {}, {}, True
    for grid in grids:
        same = torch.equal(body(0, grid), dw_ref)  # also the warm call launched_grid needs
        equal = equal and same
        launched[str(grid)] = launched_grid(lambda grid=grid: body(0, grid),
                                            "backward_deterministic_kernel<")
        stats, errors = timing.measure({"ours": lambda i, grid=grid: body(i, grid)}, timer,
                                       n_sets=n_sets, plan=plan)
        if errors:
            raise SystemExit(errors)
        us[str(grid)] = round(stats["ours"].median_us, 3)
    print(json.dumps({"shape": shape, "us": us, "launched": launched, "dw_equal": equal}))
