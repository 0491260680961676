"""Session 54: the backward at T = 1 for ncu (cold caches, one kernel a launch): ours at each
H of argv[1], and torch.compile's FP32 formula where argv[3] is "compile"; eight calls each.
  python ncu_t1.py 512,2048 fp32 [compile]"""
import sys

import torch

from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

cands = [Ours("first_party")] + ([CompiledFp32()] if sys.argv[3:] == ["compile"] else [])
for hidden in (int(v) for v in sys.argv[1].split(",")):
    case = Case("plain", 1, hidden, w_dtype=sys.argv[2])
    sets = make_input_sets(case, torch.device("cuda"), 0, 1)
    for cand in cands:
        cand.availability(torch.device("cuda"))
        cand.setup(case, sets)
        state = cand.forward(sets[0], grad=True)
        for _ in range(8):
            cand.backward(sets[0], state, retain=True)
torch.cuda.synchronize()
