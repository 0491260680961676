"""Session 53: the backward at T = 1, ours (first-party) against torch.compile's FP32 formula, in
the harness's engine (CUDA graphs, L2 flush) and under CUPTI (each kernel of a body: its count,
duration and the gap before it), plus the Triton source and config of every kernel Inductor ran.
  python bwd_t1.py 256,512,1024,2048,4096 bf16|fp32"""
import json
import os
import statistics
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import inductor_launchers, kernel_gaps, replay_kernels  # noqa: E402

hiddens, w_name = [int(v) for v in sys.argv[1].split(",")], sys.argv[2]
device = torch.device("cuda")
timer = timing.Timer(device)
flush_us = timing.measure_flush_us(timer)
seen: set = set()


def dump_inductor(tag: str) -> None:
    """Print each Inductor kernel's launcher config and Triton source once."""
    for name, obj, ln in inductor_launchers():
        key = (tag, name, str(getattr(ln, "config", None)))
        if key in seen:
            continue
        seen.add(key)
        print(f"KERNEL {tag} {name}: {getattr(ln, 'config', None)} "
              f"regs={getattr(ln, 'n_regs', '?')}")
        src = getattr(getattr(obj, "fn", None), "src", None)
        if src and (name, "src") not in seen:
            seen.add((name, "src"))
            print(src)


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
    dump_inductor(f"1x{h}")
    plan = timing.plan_samples(5.0, flush_us)
    stats, errors = timing.measure(bodies, timer, n_sets=2, plan=plan)
    if errors:
        raise SystemExit(errors)
    row = {"harness": {k: round(v.median_us, 3) for k, v in stats.items()}}
    for label, body in bodies.items():
        replay, err = timer.build(body, 20, 2)
        if err:
            raise SystemExit(err)
        kern = replay_kernels(replay)
        by_name = kernel_gaps(kern, lambda n: not any(
            k in n.lower() for k in ("flush", "fill", "pinned_zero", "elementwise")))
        row[label] = {n: {"n": len(v["dur"]) / 100, "dur": round(statistics.median(v["dur"]), 3),
                          "gap": round(statistics.median(v["gap"]), 3)}
                      for n, v in by_name.items()}
        row[label + "_all"] = sorted({e["name"][:50] for e in kern})
    print("TRACE", f"1x{h}", w_name, json.dumps(row))
    summary.append((h, row))
    for cand in cands.values():
        cand.teardown()


def fmt(d: dict) -> str:
    """Kernels of one body: name, count a body, median duration and gap."""
    return "; ".join(f"{n[:28]} {v['n']} {v['dur']} {v['gap']}" for n, v in d.items())


print(f"| 1 x H {w_name} w | ours | compile | ours kernels (n, dur, gap) | compile kernels |")
for h, row in summary:
    hk = row["harness"]
    print(f"| {h} | {hk['ours']} | {hk['compile']} | {fmt(row['ours'])} | {fmt(row['compile'])} |")
