"""Session 31 probe: the forward's cold start, ours and the peers interleaved call by call.

cold_gap.py and cold_parts.py timed each candidate in profiler sessions of its own and disagreed
on Liger's cold calls (64 x 2048: 1.38 us in one, 1.87 in the other; ours 1.98 in both). Here
every profiler session holds all candidates, call by call ([fill] [pre] ours, [fill] [pre]
Liger, ...), so that each sees the same clocks and state. CUPTI kernel durations, median of 30,
attributed by kernel name. Modes: warm (no fill), cold (fill), x / w (fill, then a torch.sum over
x / the weights, not timed), precall (fill, then the same candidate's call on other inputs).
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
CASES = [plain_case(64, 2048), plain_case(64, 8192), plain_case(256, 4096),
         plain_case(256, 8192), residual_case(64, 6144)]
CALLS = 30
MODES = os.environ.get("MODES", "warm,cold,x,w,precall").split(",")
TAGS = {"ours": "miles_rmsnorm", "liger": "_rms_norm", "compile": "triton_"}
SKIP = ("fill", "reduce", "memset", "memcpy")

cands = [c for c in build_candidates(list(TAGS), ["first_party"]) if c.availability(DEV) is None]
print(f"{'case':24s} {'mode':8s} " + " ".join(f"{c.key[:12]:>12s}" for c in cands))
for case in CASES:
    sets = make_input_sets(case, DEV, 0, 2)
    calls = []
    for cand in cands:
        cand.setup(case, sets)
        calls.append((lambda c=cand: c.forward(sets[0], grad=False),
                      lambda c=cand: c.forward(sets[1], grad=False)))
    for fn, other in calls:
        for _ in range(5):
            fn()
            other()
    torch.cuda.synchronize()
    for mode in MODES:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                for fn, other in calls:
                    if mode != "warm":
                        flush.fill_(1.0)
                    if mode == "x":
                        sets[0].x.sum()
                    if mode == "w":
                        sets[0].w.sum()
                    if mode == "precall":
                        other()
                    fn()
            torch.cuda.synchronize()
        events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                  and not any(s in e.name.lower() for s in SKIP)]
        cells = []
        for cand in cands:
            tag = TAGS[cand.key.split("[")[0]]
            times = [e.device_time for e in events if tag in e.name]
            if mode == "precall":
                times = times[1::2]
            cells.append(statistics.median(times) if len(times) == CALLS else float("nan"))
        print(f"{case.key:24s} {mode:8s} " + " ".join(f"{t:12.2f}" for t in cells), flush=True)
    for cand in cands:
        cand.teardown()
