"""One benchmark run: cases x ops x candidates, bounded by a time budget, written as it goes.

For each case: build the input sets, an FP64 reference, set every candidate up (first calls,
compilation, accuracy check, all outside timing), then per op time all candidates together
(:func:`benchmarks.rmsnorm.timing.measure`). ``results.json`` is rewritten atomically after
every case, so a run stopped early still leaves every finished case on disk; the markdown and
plots are written at the end (or re-rendered from the JSON with ``--from-json``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from benchmarks.rmsnorm import accuracy, budget, records, report, sysinfo, timing
from benchmarks.rmsnorm.candidates import Candidate, FwdResult, build_candidates
from benchmarks.rmsnorm.host_overhead import measure_host_overhead
from benchmarks.rmsnorm.inputs import TORCH_DTYPES, InputSet, input_set_count, make_input_sets
from benchmarks.rmsnorm.shapes import Case

SCHEMA = 1
RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
REPORT_RESERVE_S = 20.0


@dataclass
class RunConfig:
    """Everything a run needs (built by ``__main__`` from the command line)."""

    device: str
    out_dir: Path
    mode: str
    cases: list[Case]
    ops: tuple[str, ...]
    candidate_keys: tuple[str, ...]
    ours_backends: tuple[str, ...]
    compile_backend: str = "inductor"
    time_budget_s: float | None = None
    compile_budget_s: float | None = None
    seed: int = 0
    input_sets: int | None = None
    graphs: int = 1
    host_overhead: bool = True
    plots: bool = True
    compare: Path | None = None
    argv: list[str] = field(default_factory=list)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file and rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False, default=str) + "\n")
    os.replace(tmp, path)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _error_text(exc: BaseException) -> str:
    return f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:240] if str(exc) else ''}"


class _Context:
    """Per-run state shared by the cases."""

    def __init__(self, config: RunConfig, device: torch.device, timer: timing.Timer,
                 candidates: list[Candidate], ceiling_tb_per_s: float, flush_us: float) -> None:
        self.config = config
        self.device = device
        self.timer = timer
        self.candidates = candidates
        self.ceiling = ceiling_tb_per_s
        self.flush_us = flush_us
        self.compile_spent_s = 0.0
        self.peer_keys = [c.key for c in candidates if not c.is_ours]
        self.ours_keys = [c.key for c in candidates if c.is_ours]

    def compile_budget_left(self) -> float:
        if self.config.compile_budget_s is None:
            return float("inf")
        return self.config.compile_budget_s - self.compile_spent_s


def _check_accuracy(cand: Candidate, inp: InputSet, ref: accuracy.Reference,
                    case: Case) -> accuracy.Accuracy:
    """First calls of every path (compiles/JITs happen here) and the accuracy verdict."""
    fresh = inp.with_private_grads() if cand.mutates_grad else inp
    fwd = cand.forward(fresh, grad=True)
    dx, dw = cand.backward(fresh, fwd, retain=False)
    result = accuracy.check(ref, fwd.y, dx, dw, TORCH_DTYPES[case.x_dtype])
    cand.forward(fresh, grad=False)
    return result


def _body(cand: Candidate, op: str, sets: Sequence[InputSet],
          states: Sequence[FwdResult] | None) -> Callable[[int], object]:
    if op == "fwd":
        def fwd(i: int) -> None:
            cand.forward(sets[i], grad=True)
        return fwd
    if op == "bwd":
        assert states is not None

        def bwd(i: int) -> None:
            cand.backward(sets[i], states[i], retain=True)
        return bwd

    def step(i: int) -> None:
        cand.forward(sets[i], grad=False)
        cand.backward(sets[i], cand.forward(sets[i], grad=True), retain=False)
    return step


def _primary_ours(ctx: _Context, cells: dict[str, dict[str, Any]]) -> str | None:
    for key in ctx.ours_keys:
        if cells.get(key, {}).get("stats"):
            return key
    return ctx.ours_keys[0] if ctx.ours_keys else None


def run_case(case: Case, ctx: _Context) -> list[dict[str, Any]]:
    """All ops of one case; returns its result rows."""
    cfg = ctx.config
    n_sets = input_set_count(case, ctx.device, cfg.input_sets)
    sets = make_input_sets(case, ctx.device, cfg.seed, n_sets)
    ref = accuracy.fp64_reference(sets[0])
    ctx.timer.synchronize()  # the candidates run on the timer's side stream
    base: dict[str, dict[str, Any]] = {}
    active: dict[str, tuple[Candidate, Sequence[InputSet], accuracy.Accuracy]] = {}
    for cand in ctx.candidates:
        try:
            reason = cand.supports(case)
        except Exception as exc:  # noqa: BLE001 - a broken support query is a table cell
            base[cand.key] = {"status": _error_text(exc)}
            continue
        if reason:
            base[cand.key] = {"status": f"n/a: {reason}"}
            continue
        if cand.key == "compile" and ctx.compile_budget_left() <= 0:
            base[cand.key] = {"status": "not run: compile budget spent"}
            continue
        cand_sets = [s.with_private_grads() for s in sets] if cand.mutates_grad else sets
        start = time.monotonic()
        try:
            with ctx.timer.stream_context():
                cand.setup(case, cand_sets)
                acc = _check_accuracy(cand, cand_sets[0], ref, case)
            ctx.timer.synchronize()
        except Exception as exc:  # noqa: BLE001 - one candidate's failure is a table cell
            ctx.timer.synchronize()
            cand.teardown()
            if cand.key == "compile":
                ctx.compile_spent_s += time.monotonic() - start
            unsupported = type(exc).__name__.endswith("UnsupportedError")
            base[cand.key] = {"status": (f"n/a: {str(exc)[:200]}" if unsupported
                                         else _error_text(exc))}
            continue
        setup_s = time.monotonic() - start
        if cand.key == "compile":
            ctx.compile_spent_s += setup_s
        base[cand.key] = {"status": "ok", "setup_s": round(setup_s, 3),
                          "accuracy": acc.to_json()}
        active[cand.key] = (cand, cand_sets, acc)
    del ref
    rows: list[dict[str, Any]] = []
    for op in cfg.ops:
        bodies: dict[str, Callable[[int], object]] = {}
        cells = {key: dict(value) for key, value in base.items()}
        states: dict[str, list[FwdResult]] = {}
        for key, (cand, cand_sets, _) in active.items():
            if op == "bwd":
                try:
                    with ctx.timer.stream_context():
                        states[key] = [cand.forward(s, grad=True) for s in cand_sets]
                except Exception as exc:  # noqa: BLE001
                    cells[key]["status"] = _error_text(exc)
                    continue
            bodies[key] = _body(cand, op, cand_sets, states.get(key))
        call_us = budget.est_call_us(case, op, ctx.ceiling)
        plan = timing.plan_samples(call_us, ctx.flush_us, quick=cfg.mode == "quick",
                                   smoke=cfg.mode == "smoke")
        stats, errors = timing.measure(bodies, ctx.timer, n_sets=n_sets, plan=plan,
                                       graphs=cfg.graphs)
        for key, (_, _, acc) in active.items():
            if key in stats:
                cells[key]["stats"] = stats[key].to_json()
                cells[key]["ok_for_op"] = acc.ok_for(op)
            elif key in errors:
                cells[key]["status"] = errors[key]
        row = {"case": case.to_json(), "op": op, "bytes": case.tensor_bytes(op),
               "n_sets": n_sets, "plan": {"n_inner": plan.n_inner, "samples": plan.samples,
                                          "graphs": cfg.graphs},
               "cells": cells}
        report.annotate_row(row, _primary_ours(ctx, cells), ctx.peer_keys, ctx.ceiling)
        rows.append(row)
        del bodies, states
        ctx.timer.synchronize()
    for cand, _, _ in active.values():
        cand.teardown()
    del sets, active
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()
    return rows


def _candidate_records(candidates: Sequence[Candidate], device: torch.device) -> tuple[
        list[Candidate], list[dict[str, Any]]]:
    available: list[Candidate] = []
    records: list[dict[str, Any]] = []
    for cand in candidates:
        status = cand.availability(device)
        records.append({"key": cand.key, "name": cand.name, "is_ours": cand.is_ours,
                        "status": status or "ok", "version": cand.version()})
        if status is None:
            available.append(cand)
    return available, records


def finish_report(results: dict[str, Any], out_dir: Path, *, plots: bool,
                  compare: Path | None) -> dict[str, Any]:
    """Write results.md (and PNG plots) next to results.json; returns what was written."""
    spread = None
    if compare is not None:
        previous = records.read_results(compare)
        spread = report.session_spread(previous, results)
        results["session_spread"] = {"against": str(compare), "rows": spread}
    written: dict[str, Any] = {"markdown": str(out_dir / RESULTS_MD), "plots": []}
    if plots:
        try:
            written["plots"] = [str(p) for p in report.write_plots(results, out_dir)]
        except ImportError as exc:
            written["plots_error"] = f"matplotlib not installed ({exc})"
    (out_dir / RESULTS_MD).write_text(report.render_markdown(results, spread) + "\n")
    results["outputs"] = written
    write_json_atomic(out_dir / RESULTS_JSON, results)
    return written


def run(config: RunConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the benchmark described by ``config``; returns the results dict (also on disk)."""
    started = time.monotonic()
    deadline = started + config.time_budget_s if config.time_budget_s else None
    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"--device {config.device}: CUDA is not available on this machine")
    config.out_dir.mkdir(parents=True, exist_ok=True)
    if device.type == "cuda" and device.index is not None:
        torch.cuda.set_device(device)
    system = sysinfo.collect(device)
    candidates = build_candidates(config.candidate_keys, config.ours_backends,
                                  compile_backend=config.compile_backend)
    available, records = _candidate_records(candidates, device)
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "meta": {"mode": config.mode, "device": str(device), "started": _now(),
                 "argv": config.argv, "ops": list(config.ops), "seed": config.seed,
                 "eps": accuracy.EPS, "time_budget_s": config.time_budget_s,
                 "compile_budget_s": config.compile_budget_s, "graphs": config.graphs,
                 "system": system,
                 "complete": False},
        "candidates": records,
        "rows": [],
        "skipped": [],
    }
    json_path = config.out_dir / RESULTS_JSON
    ceiling = timing.measure_copy_ceiling(device)
    timer = timing.Timer(device)
    flush_us = timing.measure_flush_us(timer)
    results["meta"].update(copy_ceiling=ceiling, flush_us=flush_us,
                           flush_bytes=timer.flusher.nbytes, flush_method=timer.flusher.method)
    log(f"{system.get('gpu')}: copy ceiling {ceiling['tb_per_s']:.2f} TB/s, flush "
        f"{flush_us:.1f} us; candidates: "
        + ", ".join(f"{r['key']}={r['status']}" for r in records))
    write_json_atomic(json_path, results)
    ctx = _Context(config, device, timer, available, ceiling["tb_per_s"], flush_us)
    has_compile = any(c.key == "compile" for c in available)
    jit_keys = [c.key for c in available if c.key in budget.JIT_S_PER_VARIANT]
    seen_variants: set[tuple[int, bool, str]] = set()
    for index, case in enumerate(config.cases):
        if deadline is not None:
            with_compile = has_compile and ctx.compile_budget_left() > 0
            estimate = budget.estimate_case_s(
                case, config.ops, len(available), with_compile=with_compile,
                quick=config.mode == "quick", flush_us=flush_us,
                ceiling_tb_per_s=ceiling["tb_per_s"]) + budget.jit_s(case, seen_variants,
                                                                     jit_keys)
            if time.monotonic() + estimate > deadline - REPORT_RESERVE_S:
                results["skipped"].append({"case": case.key,
                                           "reason": "time budget (estimated "
                                                     f"{estimate:.1f} s)"})
                continue
        case_start = time.monotonic()
        seen_variants.add(budget.variant(case))
        try:
            results["rows"].extend(run_case(case, ctx))
        except Exception as exc:  # noqa: BLE001 - e.g. out of memory: record, go on
            results["skipped"].append({"case": case.key, "reason": _error_text(exc)})
            if device.type == "cuda":
                torch.cuda.synchronize(device)
                torch.cuda.empty_cache()
        log(f"[{index + 1}/{len(config.cases)}] {case.key}: {time.monotonic() - case_start:.1f} s"
            f" (elapsed {time.monotonic() - started:.0f} s)")
        results["meta"]["compile_spent_s"] = round(ctx.compile_spent_s, 2)
        write_json_atomic(json_path, results)
    if config.host_overhead:
        results["host_overhead"] = measure_host_overhead(
            device, backend=None, calls=50 if config.mode == "smoke" else 2000,
            warmup=5 if config.mode == "smoke" else 200)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        results["meta"]["nvidia_smi_end"] = sysinfo.nvidia_smi(index)
    results["meta"].update(finished=_now(), elapsed_s=time.monotonic() - started,
                           complete=not results["skipped"])
    write_json_atomic(json_path, results)
    finish_report(results, config.out_dir, plots=config.plots, compare=config.compare)
    log(f"wrote {json_path} and {config.out_dir / RESULTS_MD} in "
        f"{time.monotonic() - started:.0f} s")
    return results
