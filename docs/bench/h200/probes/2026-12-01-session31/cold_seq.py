"""Session 31 probe: which sequences of calls make a cold forward call slow.

cold_inter.py timed ours 64 x 2048 cold at 1.50 us interleaved with the peers, where each
candidate's own sessions (cold_gap.py, and the harness's graphs: flush; call; flush; call ...)
gave 1.98. CUPTI durations (median of 30) of the timed call A in repeated sequences, all in one
profiler session each:
  alone     fill A                       (the harness's sequence)
  alt       fill A, fill A'              (A' the same candidate on other inputs)
  pair      fill A, fill B               (B the other candidate, same inputs)
  tiny      fill, a one-block add, A
  graph     alone, captured as one CUDA graph of 30 (the harness's form)
"""
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
tiny = torch.zeros(256, device=DEV)
CASES = [plain_case(64, 2048), plain_case(256, 4096), plain_case(64, 8192)]
CALLS = 30
TAGS = {"ours": "miles_rmsnorm", "liger": "_rms_norm"}


def fill():
    flush.fill_(1.0)


def timed(seq, tag, every=1, graph=False):
    """Median CUPTI time of the kernels named `tag` (every `every`-th) over CALLS repeats."""
    if graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for f in seq:
                f()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(CALLS):
                for f in seq:
                    f()
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        if graph:
            g.replay()
        else:
            for _ in range(CALLS):
                for f in seq:
                    f()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and tag in e.name]
    return statistics.median(times[::every]) if times else float("nan")


cands = {c.key.split("[")[0]: c for c in build_candidates(list(TAGS), ["first_party"])
         if c.availability(DEV) is None}
print(f"{'case':24s} {'cand':6s} {'alone':>7s} {'alt':>7s} {'pair':>7s} {'tiny':>7s} "
      f"{'graph':>7s}")
for case in CASES:
    sets = make_input_sets(case, DEV, 0, 2)
    outs = {}  # keep graph outputs alive
    fns = {}
    for key, cand in cands.items():
        cand.setup(case, sets)
        fns[key] = (lambda c=cand: c.forward(sets[0], grad=False),
                    lambda c=cand: c.forward(sets[1], grad=False))
    for a, b in fns.values():
        for _ in range(5):
            a()
            b()
    for key in cands:
        other = next(k for k in cands if k != key)
        a, a2 = fns[key]
        b = fns[other][0]
        tag = TAGS[key]
        row = [timed([fill, a], tag),
               timed([fill, a, fill, a2], tag, every=2),
               timed([fill, a, fill, b], tag),
               timed([fill, lambda: tiny.add_(1.0), a], tag)]
        try:
            row.append(timed([fill, lambda: outs.__setitem__(key, a())], tag, graph=True))
        except Exception as exc:  # noqa: BLE001
            print(f"graph failed: {exc}")
            row.append(float("nan"))
        print(f"{case.key:24s} {key:6s} " + " ".join(f"{t:7.2f}" for t in row), flush=True)
    for cand in cands.values():
        cand.teardown()
