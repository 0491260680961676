"""Session 48: CUPTI kernel durations (torch.profiler) of ours, Liger and torch.compile on small
forward calls, each call after the harness's kind of L2 flush (a 256 MB fill, excluded) or
warm (FLUSH=0). Session 25's kernel_times.py with the cases as argv[1]
(family:TxH:weight,...). Prints per case and candidate the median over 30 calls of one call's
summed kernel time, the kernel count and names."""
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case, residual_case

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CALLS = 30
FLUSH = os.environ.get("FLUSH", "1") != "0"
cands = build_candidates(os.environ.get("CANDS", "ours,liger,compile").split(","),
                         ["first_party"])
for cand in cands:
    cand.availability(DEV)
print(f"L2 {'cold' if FLUSH else 'warm'}")
for spec in sys.argv[1].split(","):
    family, shape, weight = spec.split(":")
    t, h = (int(v) for v in shape.split("x"))
    case = (plain_case if family == "plain" else residual_case)(t, h, weight)
    sets = make_input_sets(case, DEV, 0, 1)
    for cand in cands:
        if cand.supports(case) is not None:
            continue
        cand.setup(case, sets)
        for _ in range(5):
            cand.forward(sets[0], grad=False)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                if FLUSH:
                    flush.fill_(1.0)
                cand.forward(sets[0], grad=False)
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                   and "fill" not in e.name.lower() and "memset" not in e.name.lower()]
        per_call = len(kernels) // CALLS
        sums = [sum(k.device_time for k in kernels[i * per_call:(i + 1) * per_call])
                for i in range(CALLS)] if per_call else [0.0]
        names = sorted({k.name[:50] for k in kernels})
        print(f"{spec:24s} {cand.key:18s} {statistics.median(sums):7.2f} {per_call:3d}  "
              f"{'; '.join(names)[:110]}")
        cand.teardown()
