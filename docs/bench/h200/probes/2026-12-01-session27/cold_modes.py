"""Session 27, call 9: CUPTI kernel durations (torch.profiler) of the small-batch backward in
four launch modes, each call after an L2 flush (a 256 MB fill, excluded) as the harness's cold
L2: the launcher's choice (16-CTA clusters; the fold at H 2056-4096), the re-read forced, and
8-CTA clusters (MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS=0) with the fold or the re-read forced.
The launcher reads both variables at each launch. Median over 30 calls, us; FLUSH=0: warm."""
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CALLS = 30
FLUSH = os.environ.get("FLUSH", "1") != "0"
SHAPES = [(64, 4096), (80, 4096), (96, 4096), (96, 3072), (64, 8192), (64, 2048)]
MODES = {"16 launcher": {}, "16 reread": {"MILES_EXT_KERNELS_SMALL_DW": "reread"},
         "8 fold": {"MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS": "0",
                    "MILES_EXT_KERNELS_SMALL_DW": "fold"},
         "8 reread": {"MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS": "0",
                      "MILES_EXT_KERNELS_SMALL_DW": "reread"}}
KEYS = ("MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS", "MILES_EXT_KERNELS_SMALL_DW")


def kernel_us(fn) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            if FLUSH:
                flush.fill_(1.0)
            fn()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and "small" in e.name]
    return statistics.median(times)


print(f"L2 {'cold' if FLUSH else 'warm'}\n{'rows x hidden':>14s} "
      + " ".join(f"{m:>12s}" for m in MODES))
for rows, hidden in SHAPES:
    x = torch.randn(rows, hidden, device=DEV).bfloat16()
    g = torch.randn_like(x)
    w = torch.rand(hidden, device=DEV).bfloat16()
    _, rstd = rmsnorm_forward(x, w)
    dx = torch.empty_like(x)
    dw = torch.empty(hidden, device=DEV)
    t = {}
    for mode, env in MODES.items():
        for k in KEYS:
            os.environ.pop(k, None)
        os.environ.update(env)
        t[mode] = kernel_us(lambda: rmsnorm_backward(g, x, w, rstd, dx=dx, dw=dw))
    for k in KEYS:
        os.environ.pop(k, None)
    print(f"{rows:>6d} x {hidden:<5d} " + " ".join(f"{t[m]:12.2f}" for m in MODES))
