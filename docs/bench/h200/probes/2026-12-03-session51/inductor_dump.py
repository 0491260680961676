"""Session 51: what torch.compile (Inductor) runs for the harness's FP32 formula where it leads
ours (H 256 and 512, T 1024-65536): the Triton source of each generated kernel and the config its
autotuner kept, then ours and it timed side by side (the harness's engine: CUDA graphs, L2 flush).
  python inductor_dump.py 4096x256,16384x256 bf16|fp32"""
import json
import os
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import fp32_formula
from miles_ext_kernels.cake import rmsnorm_forward

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import print_inductor_configs  # noqa: E402

shapes, w_name = sys.argv[1].split(","), sys.argv[2]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
w_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[w_name]
seen = set()
rows = {}
for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    torch._dynamo.reset()
    fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
    sets = [(torch.randn(t, h, device=device, dtype=torch.bfloat16),
             torch.rand(h, device=device, dtype=w_dtype) + 0.5) for _ in range(2)]
    with torch.no_grad():
        fn(sets[0][0], sets[0][1], None)
        torch.cuda.synchronize()
    print_inductor_configs(f"{shape} {w_name}", seen, sources=True, sources_each_tag=True,
                           resources=True)

    def ours(i, sets=sets):
        rmsnorm_forward(sets[i][0], sets[i][1], backend="first_party", strict=True)

    def comp(i, sets=sets, fn=fn):
        with torch.no_grad():
            fn(sets[i][0], sets[i][1], None)

    plan = timing.plan_samples(4 * t * h / 4.0e6 + 2.0, flush_us)
    stats, errors = timing.measure({"ours": ours, "compile": comp}, timer, n_sets=2, plan=plan)
    if errors:
        raise SystemExit(errors)
    rows[shape] = {k: round(v.median_us, 3) for k, v in stats.items()}
print("TIMES", w_name, json.dumps(rows))
