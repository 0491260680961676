"""Session 48: one forward call of one candidate for each case, inside an NVTX range "probe",
for ncu (--nvtx --nvtx-include probe/), after three warm-up calls of the same inputs.
  python ncu_cands.py ours|liger|compile plain:1x256:bf16,residual:16x6144:bf16,...
"""
import sys

import torch

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case, residual_case

DEV = torch.device("cuda")
cand = build_candidates([sys.argv[1]], ["first_party"])[0]
reason = cand.availability(DEV)
if reason is not None:
    raise SystemExit(f"{sys.argv[1]}: {reason}")
for spec in sys.argv[2].split(","):
    family, shape, weight = spec.split(":")
    t, h = (int(v) for v in shape.split("x"))
    case = (plain_case if family == "plain" else residual_case)(t, h, weight)
    sets = make_input_sets(case, DEV, 0, 1)
    cand.setup(case, sets)
    for _ in range(3):
        cand.forward(sets[0], grad=False)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("probe")
    cand.forward(sets[0], grad=False)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    cand.teardown()
    print(f"{sys.argv[1]} {spec} done", file=sys.stderr)
