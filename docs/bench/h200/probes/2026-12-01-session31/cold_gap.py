"""Session 31 probe: what the forward's cold start costs ours and the peers, and why.

CUPTI kernel durations (torch.profiler) of one forward call, median of 30, under four modes:
  cold     a 256 MB fill, then the call (the harness's cold L2);
  warm     the call alone (its inputs, code and weights in L2 from the call before);
  precall  the fill, then the same candidate's call on other inputs of the shape (other x, w and
           u; its kernels' code and launch path warmed, none of the timed call's data), then the
           timed call (only its kernels counted);
  sleep    the fill, then a ~20 us spin kernel, then the call (the fill's write-back drained).
If ours' extra cold cost goes in `precall`, it is the code (or something else per kernel, not per
byte); if it goes in `sleep`, it is the fill's write-back meeting our loads.
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
CASES = [plain_case(256, 4096), plain_case(256, 8192), plain_case(64, 8192),
         plain_case(64, 2048), residual_case(64, 6144), plain_case(256, 2048)]
CALLS = 30
MODES = os.environ.get("MODES", "cold,warm,precall,sleep").split(",")
CANDS = os.environ.get("CANDS", "ours,liger,compile").split(",")
SKIP = ("fill", "memset", "memcpy", "spin")


def run_mode(mode, fn, other):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            if mode != "warm":
                flush.fill_(1.0)
            if mode == "precall":
                other()
            if mode == "sleep":
                torch.cuda._sleep(40_000)
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and not any(s in e.name.lower() for s in SKIP)]
    calls_each = 2 if mode == "precall" else 1
    per_call = len(kernels) // (CALLS * calls_each)
    step = per_call * calls_each
    sums = [sum(k.device_time for k in kernels[i * step + step - per_call:(i + 1) * step])
            for i in range(CALLS)]
    return statistics.median(sums), per_call, sorted({k.name[:40] for k in kernels})


cands = build_candidates(CANDS, ["first_party"])
for cand in cands:
    cand.availability(DEV)
print(f"{'case':24s} {'candidate':12s} " + " ".join(f"{m:>8s}" for m in MODES) + "  kernels")
for case in CASES:
    sets = make_input_sets(case, DEV, 0, 2)
    for cand in cands:
        if cand.supports(case) is not None:
            continue
        cand.setup(case, sets)
        fn = lambda: cand.forward(sets[0], grad=False)  # noqa: E731
        other = lambda: cand.forward(sets[1], grad=False)  # noqa: E731
        for _ in range(5):
            fn()
            other()
        torch.cuda.synchronize()
        row = [run_mode(m, fn, other) for m in MODES]
        print(f"{case.key:24s} {cand.key:12s} " + " ".join(f"{r[0]:8.2f}" for r in row)
              + f"  {row[0][1]} {'; '.join(row[0][2])[:60]}", flush=True)
        cand.teardown()
