"""Session 52: where the harness's time goes inside its CUDA graph. For each shape, the harness's
replay (flush; body) x 20 of ours (first-party) and of torch.compile's FP32 formula, replayed
under torch.profiler (CUPTI); per body kernel: its duration and the gap from the end of the
kernel before it (the flush's last kernel) to its start, medians in us. Also the harness's own
median for both. python graph_trace.py 16384x256,1024x256 bf16|fp32"""
import json
import os
import statistics
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import fp32_formula
from miles_ext_kernels.cake import rmsnorm_forward

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import kernel_gaps, replay_kernels  # noqa: E402

shapes, w_name = sys.argv[1].split(","), sys.argv[2]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
w_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[w_name]


def is_op(name: str) -> bool:
    """Whether a kernel is the op's (ours or Inductor's), not the flush's."""
    return "miles_rmsnorm" in name or "fused_" in name


for shape in shapes:
    t, h = (int(v) for v in shape.split("x"))
    torch._dynamo.reset()
    fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
    sets = [(torch.randn(t, h, device=device, dtype=torch.bfloat16),
             torch.rand(h, device=device, dtype=w_dtype) + 0.5) for _ in range(2)]

    def ours(i, sets=sets):
        rmsnorm_forward(sets[i][0], sets[i][1], backend="first_party", strict=True)

    def comp(i, sets=sets, fn=fn):
        with torch.no_grad():
            fn(sets[i][0], sets[i][1], None)

    bodies = {"ours": ours, "compile": comp}
    plan = timing.plan_samples(4 * t * h / 4.0e6 + 2.0, flush_us)
    stats, errors = timing.measure(bodies, timer, n_sets=2, plan=plan)
    if errors:
        raise SystemExit(errors)
    row = {"harness": {k: round(v.median_us, 3) for k, v in stats.items()}}
    for label, body in bodies.items():
        replay, err = timer.build(body, 20, 2)
        if err:
            raise SystemExit(err)
        kern = replay_kernels(replay)
        by_name = kernel_gaps(kern, is_op, width=60)
        durs = [d for v in by_name.values() for d in v["dur"]]
        gaps = [g for v in by_name.values() for g in v["gap"]]
        names = set(by_name)
        n_other = sum(1 for e in kern if not is_op(e["name"]))
        row[label] = {"n": len(durs), "kernels_a_body": round(len(kern) / max(len(durs), 1), 2),
                      "dur": round(statistics.median(durs), 3),
                      "gap": round(statistics.median(gaps), 3), "others": n_other,
                      "names": sorted(names)}
    print("TRACE", shape, w_name, json.dumps(row))
