"""Shared by the probes that look inside the harness's CUDA graph (sessions 51-53 and 58): the
kernels of a replay under CUPTI (torch.profiler) and the launchers Inductor compiled. A probe in a
session directory imports it after ``sys.path.insert(0, <this directory>)``."""
import json
import os
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
