"""Session 58 (from session 53's bwd_t1.py): the forward with grad at small T, ours (first-party)
against torch.compile's FP32 formula, in the harness's engine (CUDA graphs, L2 flush) and under
CUPTI (each kernel of a body: its count, duration and the gap before it), plus the config of every
kernel Inductor ran.
  python fwd_small.py 1x256,16x256,1x512,16x512 bf16|fp32"""
import os
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.shapes import Case

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import ours_vs_compile, print_table  # noqa: E402


def forward_body(cand, sets):
    cand.forward(sets[0], grad=True)
    return lambda i: cand.forward(sets[i], grad=True)


shapes, w_name = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")], sys.argv[2]
timer = timing.Timer(torch.device("cuda"))
flush_us = timing.measure_flush_us(timer)
seen: set = set()
summary = []
for t, h in shapes:
    row = ours_vs_compile(timer, flush_us, Case("plain", t, h, w_dtype=w_name), f"{t}x{h}", seen,
                          forward_body)
    summary.append((f"{t}x{h}", row))

print_table(f"T x H {w_name} w", summary)
