"""Session 25 probe: where the small-T gap to the peers lies, inside the kernels or around them.

CUPTI kernel durations (torch.profiler) of ours, Liger and torch.compile on a few of the rows
the record run has them ahead on, each call after an L2 flush (a 256 MB fill, excluded), as
the harness's cold L2. Prints per candidate the median over 30 calls of the summed kernel time
of one call and its kernel count; the harness's CUDA-graph medians are in the record run.
FLUSH=0: no flush (warm L2: the call's inputs stay in L2 from the call before); OPS=fwd: the
forward cases only; ONE_ROW=1 (session 26): 1 x 256 and 1 x 4096 backward cases too.
"""
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case, residual_case

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CASES = [("fwd", plain_case(1, 256)), ("fwd", plain_case(256, 4096)),
         ("fwd", plain_case(256, 8192)), ("fwd", residual_case(64, 6144)),
         ("bwd", plain_case(1, 2048, "fp32")), ("bwd", plain_case(64, 4096, "fp32")),
         ("bwd", plain_case(64, 8192))]
CALLS = 30
FLUSH = os.environ.get("FLUSH", "1") != "0"
if os.environ.get("ONE_ROW") == "1":  # session 26's knob: two more one-row backward cases
    CASES.insert(CASES.index(("bwd", plain_case(1, 2048, "fp32"))), ("bwd", plain_case(1, 256)))
    CASES.insert(CASES.index(("bwd", plain_case(1, 2048, "fp32"))) + 1, ("bwd", plain_case(1, 4096)))
CASES = [(op, case) for op, case in CASES if op in os.environ.get("OPS", "fwd,bwd").split(",")]


def call_of(cand, op, inp):
    if op == "fwd":
        return lambda: cand.forward(inp, grad=False)
    state = cand.forward(inp, grad=True)
    return lambda: cand.backward(inp, state, retain=True)


cands = build_candidates(["ours", "liger", "compile"], ["first_party"])
for cand in cands:
    cand.availability(DEV)
print(f"L2 {'cold' if FLUSH else 'warm'}\n{'case':28s} {'candidate':18s} {'kernel us':>10s}"
      f" {'kernels':>8s}  names")
for op, case in CASES:
    sets = make_input_sets(case, DEV, 0, 1)
    for cand in cands:
        if cand.supports(case) is not None:
            continue
        cand.setup(case, sets)
        fn = call_of(cand, op, sets[0])
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                if FLUSH:
                    flush.fill_(1.0)
                fn()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                   and "fill" not in e.name.lower() and "memset" not in e.name.lower()
                   and "memcpy" not in e.name.lower()]
        per_call = len(kernels) // CALLS
        sums = [sum(k.device_time for k in kernels[i * per_call:(i + 1) * per_call])
                for i in range(CALLS)] if per_call else [0.0]
        names = sorted({k.name[:40] for k in kernels})
        print(f"{op} {case.key:24s} {cand.key:18s} {statistics.median(sums):10.2f} "
              f"{per_call:8d}  {'; '.join(names)[:120]}")
        cand.teardown()
