"""Two-process check of the RMSNorm kernels under torch.distributed (DDP, FSDP2, sequence parallel).

Launch (two GPUs, NCCL; an empty JIT cache shared by both ranks)::

    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    MILES_EXT_KERNELS_CACHE=$(mktemp -d) torchrun --standalone --nproc_per_node=2 \\
        -m benchmarks.distributed.two_gpu_check --out results/distributed

``--device cpu`` runs the same checks on gloo with the reference backend (the JIT check is
then skipped: the reference backend builds nothing). Without torchrun it runs as one rank.

Checks (``required`` ones decide the exit code):

1. ``jit_build_once``: both ranks call the API at the same moment on an empty cache; every
   module is compiled by exactly one rank, published once, and mapped into every rank.
2. ``ddp_local_norm_grads_identical`` / ``functional_outputs_identical``: identical inputs on
   both ranks give bit-identical RMSNorm weight gradients (DDP ``no_sync``: local, not reduced)
   and bit-identical functional outputs including the FP32 ``dw`` (all_gather of the bytes).
3. ``ddp_run_to_run`` / ``fsdp2_run_to_run``: the model trained twice from the same seed and
   data gives bit-identical reduced gradients (DDP all-reduce, FSDP2 reduce-scatter shards) at
   every step, identical losses and identical final parameters.
4. ``sp_dw_within_budget[...]``: rows split across ranks, each rank's ``dw`` of its rows
   all-reduced (sum) matches the one-rank ``dw`` of all rows and an FP64 reference within
   ``|dw - ref| <= 1e-4 + 1e-4 |ref|``; bitwise equality is recorded (it need not hold).

Writes ``two_gpu_check.json`` and ``two_gpu_check.md`` to ``--out`` and prints a table last.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from benchmarks.distributed import collectives, jit_probe, summary  # noqa: E402
from benchmarks.distributed.toy_model import (  # noqa: E402
    ModelConfig,
    build_model,
    lm_loss,
    make_batch,
    norm_parameter_names,
)
from miles_ext_kernels.cake import explain, rmsnorm_backward, rmsnorm_forward  # noqa: E402

SCHEMA = 1
JSON_NAME = "two_gpu_check.json"
MD_NAME = "two_gpu_check.md"
DW_ATOL = 1e-4
DW_RTOL = 1e-4


def check(name: str, required: bool, status: str, summary_text: str,
          **detail: Any) -> dict[str, Any]:
    """One result row: ``status`` is pass / fail / skip (required) or info (recorded only)."""
    if status not in ("pass", "fail", "skip", "info"):
        raise ValueError(f"status must be pass/fail/skip/info, got {status!r}")
    return {"name": name, "required": required, "status": status, "summary": summary_text,
            "detail": detail}


def passed(flag: bool) -> str:
    """``pass`` or ``fail``."""
    return "pass" if flag else "fail"


class Checker:
    """Runs the sections on one rank; every rank ends with the same list of checks."""

    def __init__(self, ctx: collectives.DistContext, args: argparse.Namespace) -> None:
        self.ctx = ctx
        self.args = args
        on_cpu = ctx.device.type == "cpu"
        self.backend = "reference" if on_cpu else None
        self.strict = None if on_cpu else True
        self.cfg = ModelConfig(vocab=args.vocab, hidden=args.hidden, layers=args.layers,
                               batch=args.batch, seq=args.seq, backend=self.backend,
                               strict=self.strict)
        self.checks: list[dict[str, Any]] = []
        self.section_seconds: dict[str, float] = {}
        self.sp_cases = [(args.sp_rows, args.hidden, True)] + [
            (args.sp_rows, h, False) for h in args.sp_hidden]

    # -- helpers ---------------------------------------------------------------------------

    def _sync(self) -> None:
        if self.ctx.device.type == "cuda":
            torch.cuda.synchronize(self.ctx.device)

    def _inputs(self, rows: int, hidden: int, seed: int,
                on_device: bool = False) -> dict[str, torch.Tensor]:
        """Seeded BF16 ``x, u, g`` ``[rows, hidden]`` and ``w`` ``[hidden]`` (same on every rank).

        Drawn on the CPU (device independent) unless ``on_device`` (faster; warm-up only).
        """
        where = self.ctx.device if on_device else torch.device("cpu")
        gen = torch.Generator(device=where).manual_seed(seed)
        make = lambda: torch.randn(rows, hidden, generator=gen, device=where)  # noqa: E731
        out = {"x": make(), "u": make(), "g": make(),
               "w": torch.rand(hidden, generator=gen, device=where) + 0.5}
        return {k: v.to(self.ctx.device, torch.bfloat16) for k, v in out.items()}

    def _fwd_bwd(self, data: dict[str, torch.Tensor], residual: bool,
                 rows: slice | None = None) -> dict[str, torch.Tensor]:
        pick = (lambda t: t[rows]) if rows is not None else (lambda t: t)  # noqa: E731
        x, g = pick(data["x"]), pick(data["g"])
        u = pick(data["u"]) if residual else None
        opts = {"backend": self.backend, "strict": self.strict}
        fwd = rmsnorm_forward(x, data["w"], self.cfg.eps, residual=u, **opts)
        y, rstd = fwd[0], fwd[1]
        h = fwd[2] if residual else x
        dx, dw = rmsnorm_backward(g, h, data["w"], rstd, **opts)
        return {"y": y, "rstd": rstd, "h": h, "dx": dx, "dw": dw}

    def _cross_rank(self, tensors: Sequence[torch.Tensor]) -> dict[str, Any]:
        return collectives.compare_with_rank0(collectives.gather_bytes(tensors))

    def run_section(self, name: str, fn: Any) -> None:
        """Time ``fn`` (which appends checks) between barriers.

        An exception becomes a failed required check ``section_error[name]`` (with every
        rank's message) and the next section runs: an error that every rank meets at the same
        point (e.g. strict mode refusing a shape) still yields a full report. An error on one
        rank only leaves the other waiting in a collective until ``--timeout-s``.
        """
        dist.barrier()
        start = time.perf_counter()
        error = None
        try:
            fn()
            self._sync()
        except Exception as exc:  # noqa: BLE001 - recorded as a failed check
            error = {"error": f"{type(exc).__name__}: {exc}"[:2000],
                     "traceback": traceback.format_exc()[-6000:]}
        errors = collectives.gather_objects(error)
        if any(errors):
            self.checks.append(check(
                f"section_error[{name}]", True, "fail",
                "; ".join(f"rank {r}: {e['error']}" for r, e in enumerate(errors) if e),
                ranks=errors))
        dist.barrier()
        self.section_seconds[name] = round(time.perf_counter() - start, 3)

    # -- 1. JIT ----------------------------------------------------------------------------

    def jit_section(self) -> None:
        """Both ranks build-or-load every program the later sections use, at the same time."""
        if self.ctx.device.type != "cuda":
            self.checks.append(check(
                "jit_build_once", True, "skip",
                "reference backend on the CPU builds nothing (CPU build-once: "
                "tests/runtime/test_jit_concurrency.py)"))
            return
        root = Path(os.environ[jit_probe.CACHE_ENV]).resolve()
        before = collectives.gather_objects(jit_probe.cache_listing(root))
        plans: list[str] = []
        dist.barrier()
        start = time.perf_counter()
        world, rank = self.ctx.world_size, self.ctx.rank
        shapes = [(self.cfg.batch * self.cfg.seq, self.cfg.hidden, True)] + [
            (n, hidden, residual) for rows, hidden, residual in self.sp_cases
            for n in (rows, rows * (rank + 1) // world - rows * rank // world)]
        with jit_probe.record_builds() as outcomes:
            for rows, hidden, residual in shapes:
                data = self._inputs(rows, hidden, seed=hidden, on_device=True)
                self._fwd_bwd(data, residual)
                plans.append(str(explain(data["x"], data["w"],
                                         residual=data["u"] if residual else None)))
            self._sync()
        seconds = time.perf_counter() - start
        dist.barrier()
        mine = {"pid": os.getpid(), "outcomes": outcomes,
                "mapped": jit_probe.mapped_objects(root), "seconds": round(seconds, 3)}
        ranks = collectives.gather_objects(mine)
        after = jit_probe.cache_listing(root)
        ok, problems, modules = jit_probe.jit_verdict(before, ranks, after)
        built = {r: sum(1 for o in rep["outcomes"] if o["built"]) for r, rep in enumerate(ranks)}
        text = (f"{len(modules)} module(s); builds per rank {built}; loaded by all ranks: "
                f"{all(len(m['loaded_by']) == len(ranks) for m in modules.values())}; "
                f"first call {max(r['seconds'] for r in ranks):.1f} s")
        if problems:
            text += "; " + "; ".join(problems)
        self.checks.append(check("jit_build_once", True, passed(ok), text, cache_root=str(root),
                                 modules=modules, ranks=ranks, cache_after=after,
                                 problems=problems, plans=plans if self.ctx.rank == 0 else []))

    # -- 2. identical local inputs ---------------------------------------------------------

    def local_grads_section(self) -> None:
        """Identical inputs on every rank: local gradients and functional outputs, bytes."""
        single = self.ctx.world_size < 2
        model = build_model(self.cfg, self.ctx.device, self.args.seed)
        ddp = self._ddp(model)
        ids, targets = make_batch(self.cfg, self.args.seed, 0, -1, self.ctx.device)
        with ddp.no_sync():
            lm_loss(ddp(ids), targets).backward()
        params = dict(model.named_parameters())
        norm_names = norm_parameter_names(model)
        norm = self._cross_rank([params[n].grad for n in norm_names])
        others = self._cross_rank([p.grad for n, p in params.items() if n not in norm_names])
        status = "skip" if single else passed(norm["identical"])
        self.checks.append(check(
            "ddp_local_norm_grads_identical", True, status,
            f"{len(norm_names)} RMSNorm weight grads (BF16, DDP no_sync, same batch): "
            f"differing bytes vs rank 0 {norm['differing_bytes_vs_rank0']}",
            names=norm_names, **norm))
        self.checks.append(check(
            "ddp_local_other_grads_identical", False, "info",
            f"embedding/linear grads: differing bytes vs rank 0 "
            f"{others['differing_bytes_vs_rank0']}", **others))
        rows = self.cfg.batch * self.cfg.seq
        data = self._inputs(rows, self.cfg.hidden, seed=self.args.seed + 1)
        outs = self._fwd_bwd(data, residual=True)
        order = ("y", "rstd", "h", "dx", "dw")
        func = self._cross_rank([outs[k] for k in order])
        dw_only = self._cross_rank([outs["dw"]])
        ok = func["identical"] and dw_only["identical"]
        self.checks.append(check(
            "functional_outputs_identical", True, "skip" if single else passed(ok),
            f"rmsnorm_forward/backward (residual) on {rows}x{self.cfg.hidden}: y, rstd, h_new, "
            f"dx, FP32 dw; differing bytes vs rank 0 {func['differing_bytes_vs_rank0']}",
            tensors=list(order), dw=dw_only, **func))

    # -- 3. training, twice ----------------------------------------------------------------

    def _ddp(self, model: torch.nn.Module) -> DistributedDataParallel:
        ids = [self.ctx.local_rank] if self.ctx.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def _train(self, mode: str) -> dict[str, Any]:
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.tensor import DTensor

        model = build_model(self.cfg, self.ctx.device, self.args.seed)
        if mode == "ddp":
            wrapped: torch.nn.Module = self._ddp(model)
        else:
            for block in model.blocks:
                fully_shard(block)
            wrapped = fully_shard(model)
        local = lambda t: t.to_local() if isinstance(t, DTensor) else t  # noqa: E731
        optimizer = torch.optim.SGD(model.parameters(), lr=self.args.lr)
        grads: list[dict[str, torch.Tensor]] = []
        losses: list[float] = []
        for step in range(self.args.steps):
            ids, targets = make_batch(self.cfg, self.args.seed, step, self.ctx.rank,
                                      self.ctx.device)
            optimizer.zero_grad(set_to_none=True)
            loss = lm_loss(wrapped(ids), targets)
            loss.backward()
            grads.append({n: local(p.grad).detach().clone()
                          for n, p in model.named_parameters()})
            optimizer.step()
            losses.append(float(loss.detach()))
        final = {n: local(p.detach()).clone() for n, p in model.named_parameters()}
        return {"grads": grads, "losses": losses, "final": final,
                "norm_names": norm_parameter_names(model)}

    def training_section(self, mode: str) -> None:
        """Train twice from the same seed and data; compare reduced grads bit for bit."""
        first, second = self._train(mode), self._train(mode)
        gc.collect()  # free the wrapped models (FSDP2 holds them in reference cycles)
        mismatched: list[str] = []
        for step, (a, b) in enumerate(zip(first["grads"], second["grads"], strict=True)):
            mismatched += [f"step {step} {n}" for n in a if not torch.equal(a[n], b[n])]
        final_same = all(torch.equal(first["final"][n], second["final"][n])
                         for n in first["final"])
        mine = {"mismatched": mismatched, "final_same": final_same,
                "losses_same": first["losses"] == second["losses"], "losses": first["losses"],
                "norm_mismatched": [m for m in mismatched
                                    if m.split(" ", 2)[2] in first["norm_names"]]}
        ranks = collectives.gather_objects(mine)
        ok = all(not r["mismatched"] and r["final_same"] and r["losses_same"] for r in ranks)
        n_tensors = len(first["grads"][0]) * len(first["grads"])
        mean_losses = [sum(r["losses"][i] for r in ranks) / len(ranks)
                       for i in range(self.args.steps)]
        what = "all-reduced grads" if mode == "ddp" else "reduce-scattered grad shards"
        self.checks.append(check(
            f"{mode}_run_to_run", True, passed(ok),
            f"{self.args.steps} SGD steps x2 runs: {what} identical "
            f"({n_tensors} tensors per rank; mismatches per rank "
            f"{[len(r['mismatched']) for r in ranks]}, RMSNorm ones "
            f"{[len(r['norm_mismatched']) for r in ranks]}); losses "
            + ", ".join(f"{v:.4f}" for v in mean_losses),
            ranks=ranks, mean_losses=mean_losses))
        if mode == "ddp" and self.ctx.world_size > 1:
            last = first["grads"][-1]
            same = self._cross_rank([last[n] for n in sorted(last)])
            self.checks.append(check(
                "ddp_ranks_hold_same_reduced_grads", False, "info",
                f"after the all-reduce of step {self.args.steps - 1}: differing bytes vs "
                f"rank 0 {same['differing_bytes_vs_rank0']}", **same))

    # -- 4. sequence parallel --------------------------------------------------------------

    def sp_section(self) -> None:
        """Rows split across ranks, dw all-reduced, vs one rank's dw of all rows and FP64."""
        world, rank = self.ctx.world_size, self.ctx.rank
        for rows, hidden, residual in self.sp_cases:
            data = self._inputs(rows, hidden, seed=self.args.seed + 7 * hidden + rows)
            full = self._fwd_bwd(data, residual)
            lo, hi = rows * rank // world, rows * (rank + 1) // world
            part = self._fwd_bwd(data, residual, slice(lo, hi))
            dw_sp = part["dw"].clone()
            dist.all_reduce(dw_sp, op=dist.ReduceOp.SUM)
            h64 = full["h"].double()
            r64 = torch.rsqrt(h64.square().mean(-1, keepdim=True) + self.cfg.eps)
            ref = (data["g"].double() * h64 * r64).sum(0)
            allowed = lambda base: DW_ATOL + DW_RTOL * base.abs()  # noqa: E731
            ratio_sp = float(((dw_sp.double() - ref).abs() / allowed(ref)).max())
            ratio_single = float(((full["dw"].double() - ref).abs() / allowed(ref)).max())
            ratio_vs = float(((dw_sp.double() - full["dw"].double()).abs()
                              / allowed(full["dw"].double())).max())
            bitwise = bool(torch.equal(dw_sp, full["dw"]))
            dx_rows = bool(torch.equal(part["dx"], full["dx"][lo:hi]))
            ranks = collectives.gather_objects({
                "ratio_sp_vs_fp64": ratio_sp, "ratio_single_vs_fp64": ratio_single,
                "ratio_sp_vs_single": ratio_vs, "bitwise_equal_single": bitwise,
                "dx_rows_equal": dx_rows, "rows": [lo, hi],
                "max_abs_diff_sp_vs_single": float((dw_sp - full["dw"]).abs().max())})
            worst = {k: max(r[k] for r in ranks) for k in
                     ("ratio_sp_vs_fp64", "ratio_single_vs_fp64", "ratio_sp_vs_single")}
            ok = all(v <= 1.0 for v in worst.values())
            tag = f"T={rows},H={hidden}{',residual' if residual else ''}"
            self.checks.append(check(
                f"sp_dw_within_budget[{tag}]", True, passed(ok),
                f"max err/(1e-4+1e-4*abs(ref)): all-reduced vs FP64 "
                f"{worst['ratio_sp_vs_fp64']:.3g}, one-rank vs FP64 "
                f"{worst['ratio_single_vs_fp64']:.3g}, all-reduced vs one-rank "
                f"{worst['ratio_sp_vs_single']:.3g} (pass if <= 1)", ranks=ranks, **worst))
            self.checks.append(check(
                f"sp_dw_bitwise_equal_single[{tag}]", False, "info",
                f"all-reduced dw bitwise equal to one-rank dw: "
                f"{all(r['bitwise_equal_single'] for r in ranks)} (max abs diff "
                f"{max(r['max_abs_diff_sp_vs_single'] for r in ranks):.3g}); "
                f"split rows' dx bitwise equal to one-rank rows: "
                f"{all(r['dx_rows_equal'] for r in ranks)}"))


def _device_info(ctx: collectives.DistContext) -> dict[str, Any]:
    info: dict[str, Any] = {"rank": ctx.rank, "pid": os.getpid(), "name": "cpu"}
    if ctx.device.type == "cuda":
        props = torch.cuda.get_device_properties(ctx.device)
        info.update(name=props.name, capability=f"{props.major}.{props.minor}",
                    sm_count=props.multi_processor_count, index=ctx.device.index)
    return info


def _nccl_version() -> str | None:
    try:
        version = torch.cuda.nccl.version()
    except (AttributeError, RuntimeError):
        return None
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distributed.two_gpu_check",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cuda: NCCL + Cake programs; cpu: gloo + reference backend")
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8, help="sequences per rank and step")
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--sp-rows", type=int, default=16384,
                        help="rows of the sequence-parallel batch (split across ranks)")
    parser.add_argument("--sp-hidden", type=lambda s: [int(v) for v in s.split(",") if v],
                        default=[4096], help="extra hidden sizes (no residual) of the SP "
                        "check, comma-separated; '' for none")
    parser.add_argument("--timeout-s", type=float, default=300.0,
                        help="collective timeout: a stuck rank fails the run after this long")
    args = parser.parse_args(argv)
    for name in ("hidden", "vocab", "layers", "batch", "seq", "steps", "sp_rows"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(h < 1 for h in args.sp_hidden):
        parser.error("--sp-hidden values must be >= 1")
    return args


def _cache_root_for(out: Path, rank: int) -> str:
    """``$MILES_EXT_KERNELS_CACHE``, else a new empty ``<out>/jit-cache-*`` made by rank 0."""
    configured = os.environ.get(jit_probe.CACHE_ENV)
    if configured:
        return configured
    made = [None]
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        made = [str(Path(tempfile.mkdtemp(prefix="jit-cache-", dir=out)).resolve())]
    dist.broadcast_object_list(made, src=0)
    return str(made[0])


def run(argv: Sequence[str] | None = None) -> int:
    """Run every section on this rank; rank 0 writes the files and prints the table."""
    args = parse_args(argv)
    started = time.perf_counter()
    env_before = collectives.force_multicast_off()
    ctx = collectives.init(args.device, args.timeout_s)
    try:
        os.environ[jit_probe.CACHE_ENV] = _cache_root_for(args.out, ctx.rank)
        torch.use_deterministic_algorithms(True, warn_only=True)
        checker = Checker(ctx, args)
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            checker.run_section("jit", checker.jit_section)
            checker.run_section("local_grads", checker.local_grads_section)
            checker.run_section("ddp", lambda: checker.training_section("ddp"))
            checker.run_section("fsdp2", lambda: checker.training_section("fsdp2"))
            checker.run_section("sequence_parallel", checker.sp_section)
            messages = sorted({f"{r.category.__name__}: {str(r.message)[:300]}"
                               for r in records})
        caught = [m for m in messages if "determinis" in m.lower()]
        ok = all(c["status"] in ("pass", "skip", "info") for c in checker.checks)
        devices = collectives.gather_objects(_device_info(ctx))
        if ctx.rank == 0:
            report = {
                "schema": SCHEMA, "tool": "benchmarks.distributed.two_gpu_check",
                "passed": ok, "checks": checker.checks,
                "meta": {
                    "world_size": ctx.world_size, "dist_backend": ctx.backend,
                    "device": args.device, "devices": devices,
                    "rmsnorm_backend": checker.backend or "auto (strict)",
                    "torch": torch.__version__, "cuda": torch.version.cuda,
                    "nccl": _nccl_version() if ctx.backend == "nccl" else None,
                    "config": {k: (str(v) if isinstance(v, Path) else v)
                               for k, v in vars(args).items()},
                    "env": {name: os.environ.get(name) for name in
                            (*collectives.MULTICAST_OFF_ENV, jit_probe.CACHE_ENV,
                             "CUBLAS_WORKSPACE_CONFIG")},
                    "env_before": env_before, "determinism_warnings": caught,
                    "warnings": messages[:30],
                    "section_seconds": checker.section_seconds,
                    "seconds_total": round(time.perf_counter() - started, 3),
                },
            }
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / JSON_NAME).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
            (args.out / MD_NAME).write_text(summary.render_markdown(report))
            print(summary.render_table(checker.checks), flush=True)
            print(f"{'PASS' if ok else 'FAIL'}: {args.out / JSON_NAME}", flush=True)
        gc.collect()
        dist.barrier()
        return 0 if ok else 1
    except Exception:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"error-rank{ctx.rank}.txt").write_text(traceback.format_exc())
        raise
    finally:
        # FSDP2 state keeps the wrapped models alive through reference cycles; freeing them
        # before the group goes avoids an intermittent abort at exit seen with gloo.
        gc.collect()
        dist.destroy_process_group()


def main() -> None:
    """Console entry: exit with :func:`run`'s status."""
    sys.exit(run())


if __name__ == "__main__":
    main()
