"""Shared by the probes that look inside the harness's CUDA graph (sessions 51-53 and 58): the
kernels of a replay under CUPTI (torch.profiler) and the launchers Inductor compiled. A probe in a
session directory imports it after ``sys.path.insert(0, <this directory>)``."""
import json
import os
import statistics
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch._inductor.codecache as codecache
from torch.profiler import ProfilerActivity, profile


def replay_kernels(replay: Any, *, warmup: int = 3, replays: int = 5) -> list[dict]:
    """The kernel events (CUPTI) of ``replays`` launches of a timing replay (after ``warmup``
    untraced ones), in start order; times in us."""
    for _ in range(warmup):
        replay.launch()
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            replay.launch()
            torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])


def kernel_gaps(kernels: list[dict], keep: Callable[[str], bool],
                width: int = 70) -> dict[str, dict[str, list[float]]]:
    """Per kept kernel (the first ``width`` characters of its name): each launch's duration and
    the gap from the end of the kernel before it."""
    by_name: dict[str, dict[str, list[float]]] = {}
    for prev, e in zip(kernels, kernels[1:], strict=False):
        if keep(e["name"]):
            d = by_name.setdefault(e["name"][:width], {"dur": [], "gap": []})
            d["dur"].append(e["dur"])
            d["gap"].append(e["ts"] - (prev["ts"] + prev["dur"]))
    return by_name


def inductor_launchers() -> Iterator[tuple[str, Any, Any]]:
    """(kernel name, compiled kernel, launcher) of every Triton launcher Inductor has compiled in
    this process."""
    for mod in list(getattr(codecache.PyCodeCache, "modules", [])) + list(
            getattr(codecache.PyCodeCache, "modules_no_attr", {}).values()):
        for name in dir(mod):
            obj = getattr(mod, name)
            if not hasattr(obj, "launchers") or not obj.launchers:
                continue
            for ln in obj.launchers:
                yield name, obj, ln


def print_inductor_configs(tag: str, seen: set, *, sources: bool = False,
                           sources_each_tag: bool = False, resources: bool = False) -> None:
    """Print each Inductor launcher's config not printed before for ``tag`` (``seen``), with its
    registers (and, with ``resources``, its spills and shared memory); with ``sources`` each
    kernel's Triton source, once (``sources_each_tag``: once a tag)."""
    for name, obj, ln in inductor_launchers():
        cfg = getattr(ln, "config", None)
        key = (tag, name, str(cfg))
        if key in seen:
            continue
        seen.add(key)
        extra = (f" spills={getattr(ln, 'n_spills', '?')} shared={getattr(ln, 'shared', '?')}"
                 if resources else "")
        print(f"KERNEL {tag} {name}: {cfg} regs={getattr(ln, 'n_regs', '?')}{extra}")
        src = getattr(getattr(obj, "fn", None), "src", None)
        src_key = (name, tag if sources_each_tag else "src")
        if sources and src and src_key not in seen:
            seen.add(src_key)
            print(src)


def not_flush(name: str) -> bool:
    """Whether a kernel name is not one of the harness's L2 flush kernels."""
    return not any(k in name.lower() for k in ("flush", "fill", "pinned_zero", "elementwise"))


def first_and_second(kernels: list[dict]) -> tuple[list[float], list[float], list[float]]:
    """Durations of the first and second kernel after each run of flush kernels, and the gap
    from the end of the first to the start of the second (us)."""
    first, second, gap = [], [], []
    run: list[dict] = []
    for e in kernels + [{"name": "flush"}]:
        if not_flush(e["name"]):
            run.append(e)
            continue
        if len(run) == 2:
            first.append(run[0]["dur"])
            second.append(run[1]["dur"])
            gap.append(run[1]["ts"] - (run[0]["ts"] + run[0]["dur"]))
        run = []
    return first, second, gap


def launched_grid(fn: Callable[[], Any], name_part: str) -> int:
    """The grid (x) of the last kernel whose name holds ``name_part`` that ``fn`` launches, from
    the profiler's chrome trace (CUPTI records every kernel's launch shape); -1 when none ran.
    Call ``fn`` once before (built and routed), so that the trace holds its launch alone."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    grids = [e["args"]["grid"][0] for e in events
             if name_part in e.get("name", "") and "grid" in e.get("args", {})]
    return int(grids[-1]) if grids else -1


def harness_and_kernels(timer: Any, flush_us: float, bodies: dict[str, Callable[[int], None]],
                        est_us: float = 5.0) -> dict:
    """The harness's median of each body (timing.measure over two input sets), then each body's
    kernels but the flush's in a replay of 20 calls under CUPTI: count a call, median duration and
    gap before it (us), and every kernel name of the replay (``<label>_all``)."""
    from benchmarks.rmsnorm import timing

    stats, errors = timing.measure(bodies, timer, n_sets=2,
                                   plan=timing.plan_samples(est_us, flush_us))
    if errors:
        raise SystemExit(errors)
    row: dict = {"harness": {k: round(v.median_us, 3) for k, v in stats.items()}}
    for label, body in bodies.items():
        replay, err = timer.build(body, 20, 2)
        if err:
            raise SystemExit(err)
        kern = replay_kernels(replay)
        row[label] = {n: {"n": len(v["dur"]) / 100, "dur": round(statistics.median(v["dur"]), 3),
                          "gap": round(statistics.median(v["gap"]), 3)}
                      for n, v in kernel_gaps(kern, not_flush).items()}
        row[label + "_all"] = sorted({e["name"][:50] for e in kern})
    return row


def ours_vs_compile(timer: Any, flush_us: float, case: Any, tag: str, seen: set,
                    body_of: Callable[[Any, list], Callable[[int], None]], *,
                    sources: bool = False) -> dict:
    """One case of ours (first-party) against torch.compile's FP32 formula: each candidate set up
    on two input sets, ``body_of(candidate, sets)`` (which makes its first call) giving the timed
    body; Inductor's configs printed (print_inductor_configs), then harness_and_kernels' row,
    printed as a ``TRACE`` line and returned."""
    import json

    from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
    from benchmarks.rmsnorm.inputs import make_input_sets

    sets = make_input_sets(case, timer.device, 0, 2)
    torch._dynamo.reset()
    cands = {"ours": Ours("first_party"), "compile": CompiledFp32()}
    bodies = {}
    with timer.stream_context():
        for label, cand in cands.items():
            cand.availability(timer.device)
            cand.setup(case, sets)
            bodies[label] = body_of(cand, sets)
    timer.synchronize()
    print_inductor_configs(tag, seen, sources=sources)
    row = harness_and_kernels(timer, flush_us, bodies)
    print("TRACE", tag, case.w_dtype, json.dumps(row))
    for cand in cands.values():
        cand.teardown()
    return row


def print_table(head: str, rows: list[tuple[str, dict]]) -> None:
    """harness_and_kernels' rows of ours and torch.compile as one markdown table."""
    def fmt(d: dict) -> str:
        return "; ".join(f"{n[:28]} {v['n']} {v['dur']} {v['gap']}" for n, v in d.items())

    print(f"| {head} | ours | compile | ours kernels (n, dur, gap) | compile kernels |")
    for shape, row in rows:
        hk = row["harness"]
        print(f"| {shape} | {hk['ours']} | {hk['compile']} | {fmt(row['ours'])} | "
              f"{fmt(row['compile'])} |")
