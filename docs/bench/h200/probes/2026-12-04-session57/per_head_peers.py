"""Session 57: the forward of strided per-head views [T, 24 of 32, D] at any head size D, ours
(first-party) against torch.compile's FP32 formula and Liger, with the harness's engine (CUDA
graphs, cold L2, the flush subtracted, the candidates in ABBA rounds; the harness's own
per-head family is D = 256 only). Prints a line "D T ours compile liger" (median us) a case.
  python per_head_peers.py 128,256 1,4,16,64,256,1024"""
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import CompiledFp32, Liger, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
for d in map(int, sys.argv[1].split(",")):
    for t in map(int, sys.argv[2].split(",")):
        case = Case("per_head_strided", t, d, heads=24, row_heads=32)
        sets = make_input_sets(case, device, 0, 3)
        bodies = {}
        for name, cand in (("ours", Ours("first_party")), ("compile", CompiledFp32()),
                           ("liger", Liger())):
            if cand.availability(device) is not None:
                continue
            cand.setup(case, sets)
            bodies[name] = (lambda c: lambda i: c.forward(sets[i], grad=True))(cand)
        plan = timing.plan_samples(4 * case.rows * d / 4.0e6 + 2.0, flush_us)
        stats, errors = timing.measure(bodies, timer, n_sets=3, plan=plan)
        row = " ".join(f"{stats[n].median_us:.2f}" if n in stats else "-"
                       for n in ("ours", "compile", "liger"))
        print(d, t, row, errors or "", flush=True)
