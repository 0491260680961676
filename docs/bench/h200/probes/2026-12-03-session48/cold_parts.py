"""Session 48: which part of a cold start costs ours more than Liger (call 1: CUPTI, cold after a
plain fill, 16 x 4096 1.86 against 1.39 us; warm 1.34 against 1.28; under ncu's cache flush
2.78 against 2.82). CUPTI kernel durations (torch.profiler) of one forward call, the median over
40 calls, after each of:
  W   nothing (warm: the same inputs the call before)
  F   the harness's L2 flush (benchmarks.rmsnorm.timing.L2Flusher: evict_last fill, zero_)
  FC  F, then a call on a second input set (code, constants and translations warm, data cold)
  FD  F, then a read of this call's x and w (x.sum(), w.sum(): data in L2, the call's code cold)
  FT  F, then a read of one element of each 2 MiB page of x, w and y (translations warm only)
  python cold_parts.py ours,liger plain:16x4096:bf16,...
"""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case, residual_case
from benchmarks.rmsnorm.timing import L2Flusher

DEV = torch.device("cuda")
CALLS = 40
flusher = L2Flusher(DEV)
cands = build_candidates(sys.argv[1].split(","), ["first_party"])
for cand in cands:
    if cand.availability(DEV) is not None:
        raise SystemExit(f"{cand.key} unavailable")
MODES = ["W", "F", "FC", "FD", "FT"]
print(f"{'case':24s} {'candidate':18s} " + " ".join(f"{m:>6s}" for m in MODES))


def page_touch(t: torch.Tensor) -> None:
    flat = t.view(-1).view(torch.uint8) if t.dtype != torch.uint8 else t.view(-1)
    step = 2 * 1024 * 1024
    if flat.numel() > step:
        flat[::step].sum()
    else:
        flat[:1].sum()


for spec in sys.argv[2].split(","):
    family, shape, weight = spec.split(":")
    t, h = (int(v) for v in shape.split("x"))
    case = (plain_case if family == "plain" else residual_case)(t, h, weight)
    sets = make_input_sets(case, DEV, 0, 2)
    for cand in cands:
        if cand.supports(case) is not None:
            continue
        cand.setup(case, sets)
        out = cand.forward(sets[0], grad=False)
        for _ in range(5):
            cand.forward(sets[0], grad=False)
            cand.forward(sets[1], grad=False)
        torch.cuda.synchronize()
        med = []
        for mode in MODES:
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(CALLS):
                    if mode != "W":
                        flusher()
                    if mode == "FC":
                        cand.forward(sets[1], grad=False)
                    elif mode == "FD":
                        sets[0].x.sum()
                        sets[0].w.sum()
                        if sets[0].u is not None:
                            sets[0].u.sum()
                    elif mode == "FT":
                        for tensor in (sets[0].x, sets[0].w, out.y):
                            page_touch(tensor)
                    cand.forward(sets[0], grad=False)
                torch.cuda.synchronize()
            names = ("miles_rmsnorm", "rms_norm", "triton_")
            ks = [e for e in prof.events()
                  if e.device_type == torch.autograd.DeviceType.CUDA
                  and any(n in e.name for n in names) and "pinned_zero" not in e.name
                  and "reduce" not in e.name.lower() and "sum" not in e.name.lower()]
            per = len(ks) // CALLS
            med.append(statistics.median(k.device_time for k in ks[per - 1::per]) if per else 0)
        print(f"{spec:24s} {cand.key:18s} " + " ".join(f"{v:6.2f}" for v in med), flush=True)
        cand.teardown()
