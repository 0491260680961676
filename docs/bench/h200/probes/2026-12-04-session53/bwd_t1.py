"""Session 53: the backward at T = 1, ours (first-party) against torch.compile's FP32 formula, in
the harness's engine (CUDA graphs, L2 flush) and under CUPTI (each kernel of a body: its count,
duration and the gap before it), plus the Triton source and config of every kernel Inductor ran.
  python bwd_t1.py 256,512,1024,2048,4096 bf16|fp32"""
import os
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.shapes import Case

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import ours_vs_compile, print_table  # noqa: E402


def backward_body(cand, sets):
    states = [cand.forward(s, grad=True) for s in sets]
    cand.backward(sets[0], states[0], retain=True)
    return lambda i: cand.backward(sets[i], states[i], retain=True)


hiddens, w_name = [int(v) for v in sys.argv[1].split(",")], sys.argv[2]
timer = timing.Timer(torch.device("cuda"))
flush_us = timing.measure_flush_us(timer)
seen: set = set()
summary = []
for h in hiddens:
    row = ours_vs_compile(timer, flush_us, Case("plain", 1, h, w_dtype=w_name), f"1x{h}", seen,
                          backward_body, sources=True)
    summary.append((h, row))

print_table(f"1 x H {w_name} w", summary)
