"""Session 53: the backward at T = 1 of ours (first-party) and of torch.compile's FP32 formula,
each called after warm-up, for ncu to profile: python ncu_bwd.py H bf16|fp32."""
import sys

import torch

from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

case = Case("plain", 1, int(sys.argv[1]), w_dtype=sys.argv[2])
sets = make_input_sets(case, torch.device("cuda"), 0, 1)
for cand in (Ours("first_party"), CompiledFp32()):
    cand.availability(torch.device("cuda"))
    cand.setup(case, sets)
    state = cand.forward(sets[0], grad=True)
    for _ in range(3):
        cand.backward(sets[0], state, retain=True)
torch.cuda.synchronize()
