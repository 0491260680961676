"""Session 53: the backward at T = 1, ours (first-party) against torch.compile's FP32 formula, in
the harness's engine (CUDA graphs, L2 flush) and under CUPTI (each kernel of a body: its count,
duration and the gap before it), plus the Triton source and config of every kernel Inductor ran.
  python bwd_t1.py 256,512,1024,2048,4096 bf16|fp32"""
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

hiddens, w_name = [int(v) for v in sys.argv[1].split(",")], sys.argv[2]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
seen: set = set()
summary = []
for h in hiddens:
    case = Case("plain", 1, h, w_dtype=w_name)
    sets = make_input_sets(case, device, 0, 2)
    torch._dynamo.reset()
    cands = {"ours": Ours("first_party"), "compile": CompiledFp32()}
    bodies = {}
    with timer.stream_context():
        for label, cand in cands.items():
            cand.availability(device)
            cand.setup(case, sets)
            states = [cand.forward(s, grad=True) for s in sets]
            cand.backward(sets[0], states[0], retain=True)

            def body(i, cand=cand, states=states, sets=sets):
                cand.backward(sets[i], states[i], retain=True)
            bodies[label] = body
    timer.synchronize()
    print_inductor_configs(f"1x{h}", seen, sources=True)
    row = harness_and_kernels(timer, flush_us, bodies)
    print("TRACE", f"1x{h}", w_name, json.dumps(row))
    summary.append((h, row))
    for cand in cands.values():
        cand.teardown()


print_table(f"1 x H {w_name} w", summary)
