"""Session 58 (from session 53's bwd_t1.py): the forward with grad at small T, ours (first-party)
against torch.compile's FP32 formula, in the harness's engine (CUDA graphs, L2 flush) and under
CUPTI (each kernel of a body: its count, duration and the gap before it), plus the config of every
kernel Inductor ran.
  python fwd_small.py 1x256,16x256,1x512,16x512 bf16|fp32"""
import json
import os
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import harness_and_kernels, print_inductor_configs, print_table  # noqa: E402

shapes, w_name = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")], sys.argv[2]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
seen: set = set()
summary = []
for t, h in shapes:
    case = Case("plain", t, h, w_dtype=w_name)
    sets = make_input_sets(case, device, 0, 2)
    torch._dynamo.reset()
    cands = {"ours": Ours("first_party"), "compile": CompiledFp32()}
    bodies = {}
    with timer.stream_context():
        for label, cand in cands.items():
            cand.availability(device)
            cand.setup(case, sets)
            cand.forward(sets[0], grad=True)

            def body(i, cand=cand, sets=sets):
                cand.forward(sets[i], grad=True)
            bodies[label] = body
    timer.synchronize()
    print_inductor_configs(f"{t}x{h}", seen)
    row = harness_and_kernels(timer, flush_us, bodies)
    print("TRACE", f"{t}x{h}", w_name, json.dumps(row))
    summary.append((f"{t}x{h}", row))
    for cand in cands.values():
        cand.teardown()


print_table(f"T x H {w_name} w", summary)
