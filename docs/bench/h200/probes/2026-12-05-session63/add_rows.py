"""Session 63: torch.add(g, x, out=dx) on BF16 [T, H] (the backward's 6·T·H bytes: two reads, one
write) timed with the harness's engine, as rows.py times ours. Prints one JSON line
{"T x H": median us}.
  python add_rows.py 16384x2048,65536x2048"""
import json
import sys

import torch

from benchmarks.rmsnorm import timing

device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
out = {}
for shape in sys.argv[1].split(","):
    t, h = (int(v) for v in shape.split("x"))
    sets = [tuple(torch.randn(t, h, device=device, dtype=torch.bfloat16) for _ in range(3))
            for _ in range(2)]

    def body(i, sets=sets):
        g, x, dx = sets[i]
        torch.add(g, x, out=dx)

    plan = timing.plan_samples(6 * t * h / 4.0e6 + 2.0, flush_us)
    stats, errors = timing.measure({"add": body}, timer, n_sets=2, plan=plan)
    if errors:
        raise SystemExit(errors)
    out[shape] = round(stats["add"].median_us, 3)
print(json.dumps(out))
