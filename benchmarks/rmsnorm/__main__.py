"""Command line: ``python -m benchmarks.rmsnorm --device cuda --out DIR [--quick] ...``.

Modes: the full grid (default; time budget 540 s, torch.compile budget 60 s), ``--quick``
(the representative subset, fwd + bwd, budget 280 s), ``--smoke`` (CPU, tiny shapes, reference
backend: every code path except CUDA timing, for CI). ``--plan`` prints what a run would do
and its estimated device time without running anything; ``--from-json`` re-renders the
markdown and plots from an earlier ``results.json`` (or its ``results.json.gz``);
``--compress FILE...`` replaces records by the gzip-compressed copies the repository keeps.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from benchmarks.rmsnorm import budget, records, shapes
from benchmarks.rmsnorm.candidates import CANDIDATE_KEYS, OURS_BACKENDS
from benchmarks.rmsnorm.runner import RunConfig, finish_report, run

MODE_DEFAULTS = {
    # mode: (ops, time budget s, compile budget s)
    "full": (("fwd", "bwd", "step"), 540.0, 60.0),
    "quick": (("fwd", "bwd"), 280.0, None),
    # smoke: a 2 s compile budget compiles the first case only (and exercises the budget path)
    "smoke": (("fwd", "bwd", "step"), None, 2.0),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rmsnorm",
        description="RMSNorm benchmark: ours vs PyTorch, torch.compile, Liger, QuACK "
                    "(cold L2, CUDA-graph replays) -> results.json, results.md, PNG plots.")
    parser.add_argument("--device", default="cuda", help="torch device (default: cuda)")
    parser.add_argument("--out", type=Path, help="output directory (created)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="representative subset: H {2048,4096,8192} x T {1,16,1024,16384,"
                           "65536}, fwd+bwd, plus FP32-weight, residual and per-head rows")
    mode.add_argument("--smoke", action="store_true",
                      help="CPU, tiny shapes, reference backend (CI; no CUDA timing)")
    parser.add_argument("--only", help="ops to time, comma-separated: fwd,bwd,step")
    parser.add_argument("--hidden", help="only these H values (comma-separated)")
    parser.add_argument("--rows", help="only these T values (comma-separated)")
    parser.add_argument("--families", help=f"only these families: {','.join(shapes.FAMILIES)}")
    parser.add_argument("--weights", help="only these weight dtypes: bf16,fp32")
    parser.add_argument("--candidates", default=",".join(CANDIDATE_KEYS),
                        help=f"candidates (default all): {','.join(CANDIDATE_KEYS)}")
    parser.add_argument("--ours-backends",
                        help="our backends to time, in priority order (default: "
                             "vendored,first_party on CUDA; reference with --smoke)")
    parser.add_argument("--compile-backend", default=None,
                        help="torch.compile backend (default inductor; aot_eager with --smoke)")
    parser.add_argument("--time-budget", type=float,
                        help="seconds; cases that would overrun are skipped and recorded "
                             "(default 540 full, 280 quick, none smoke; 0 = unbounded)")
    parser.add_argument("--compile-budget", type=float,
                        help="seconds of torch.compile warm-up before the compile candidate "
                             "stops (default 60 full, 2 smoke, unbounded quick; 0 = unbounded)")
    parser.add_argument("--input-sets", type=int, help="input sets rotated (default 3, 2 large)")
    parser.add_argument("--graphs", type=int, default=1,
                        help="CUDA graphs captured per candidate and cell, their replays "
                             "interleaved (default 1); the cell's median then covers the "
                             "variation between captures")
    parser.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    parser.add_argument("--no-host-overhead", action="store_true",
                        help="skip the host-side latency measurement")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--compare", type=Path,
                        help="an earlier results.json (or .json.gz): report the spread between "
                             "the sessions")
    parser.add_argument("--plan", action="store_true",
                        help="print the cases and estimated device time, run nothing")
    parser.add_argument("--from-json", type=Path,
                        help="re-render results.md and plots from this results.json (or "
                             ".json.gz) into --out")
    parser.add_argument("--compress", type=Path, nargs="+", metavar="FILE",
                        help="replace each results.json by results.json.gz (checked to read "
                             "back the same), run nothing else")
    return parser


def _mode(args: argparse.Namespace) -> str:
    return "smoke" if args.smoke else "quick" if args.quick else "full"


def _select_cases(args: argparse.Namespace, mode: str) -> list[shapes.Case]:
    grid = {"smoke": shapes.smoke_grid, "quick": shapes.quick_grid,
            "full": shapes.full_grid}[mode]()
    return shapes.select(
        grid,
        hidden=shapes.parse_int_list(args.hidden, "--hidden"),
        tokens=shapes.parse_int_list(args.rows, "--rows"),
        families=shapes.parse_choice_list(args.families, "--families", shapes.FAMILIES),
        weights=shapes.parse_choice_list(args.weights, "--weights", shapes.WEIGHT_DTYPES),
    )


def make_config(args: argparse.Namespace, argv: Sequence[str]) -> RunConfig:
    """Validate the parsed arguments into a :class:`RunConfig` (ValueError names the flag)."""
    mode = _mode(args)
    default_ops, default_time, default_compile = MODE_DEFAULTS[mode]
    ops = shapes.parse_choice_list(args.only, "--only", shapes.OPS) or default_ops
    cases = _select_cases(args, mode)
    if not cases:
        raise ValueError("no case matches --hidden/--rows/--families/--weights in this mode")
    keys = shapes.parse_choice_list(args.candidates, "--candidates", CANDIDATE_KEYS) or ()
    if mode == "smoke":
        device = "cpu"
        if args.device not in ("cuda", "cpu"):
            raise ValueError(f"--smoke runs on the CPU; got --device {args.device}")
    else:
        device = args.device
        try:
            parsed = torch.device(device)
        except RuntimeError as exc:
            raise ValueError(f"--device {device!r}: {exc}") from None
        if parsed.type == "cuda" and not torch.cuda.is_available() and not args.plan:
            raise ValueError(f"--device {device}: CUDA is not available here "
                             "(use --smoke for the CPU run, or --plan)")
    default_backends = ("reference",) if mode == "smoke" else ("vendored", "first_party")
    backends = shapes.parse_choice_list(args.ours_backends, "--ours-backends",
                                        OURS_BACKENDS) or default_backends
    if args.out is None:
        raise ValueError("--out DIR is required")
    time_budget = default_time if args.time_budget is None else (args.time_budget or None)
    compile_budget = (default_compile if args.compile_budget is None
                      else (args.compile_budget or None))
    for name, value in (("--time-budget", time_budget), ("--compile-budget", compile_budget)):
        if value is not None and value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if args.graphs < 1:
        raise ValueError(f"--graphs must be >= 1, got {args.graphs}")
    check_compare(args.compare)  # now, not after the run
    compile_backend = args.compile_backend or ("aot_eager" if mode == "smoke" else "inductor")
    return RunConfig(device=device, out_dir=args.out, mode=mode, cases=cases, ops=tuple(ops),
                     candidate_keys=tuple(keys), ours_backends=tuple(backends),
                     compile_backend=compile_backend, time_budget_s=time_budget,
                     compile_budget_s=compile_budget, seed=args.seed,
                     input_sets=args.input_sets, graphs=args.graphs,
                     host_overhead=not args.no_host_overhead,
                     plots=not args.no_plots, compare=args.compare, argv=list(argv))


def check_compare(path: Path | None) -> None:
    """Raise ValueError, naming --compare, unless ``path`` is None or a readable results record."""
    if path is None:
        return
    try:
        records.read_results(path)
    except ValueError as exc:
        raise ValueError(f"--compare {exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.compress is not None:
        for path in args.compress:
            if path.suffix != ".json":
                parser.error(f"--compress {path}: expected a .json record")
            try:
                print(f"wrote {records.write_compressed(path)}")
            except ValueError as exc:
                parser.error(f"--compress {exc}")
        return 0
    if args.from_json is not None:
        if args.out is None:
            parser.error("--from-json needs --out DIR")
        try:
            results = records.read_results(args.from_json)
        except ValueError as exc:
            parser.error(f"--from-json {exc}")
        try:
            check_compare(args.compare)  # before anything is written
        except ValueError as exc:
            parser.error(str(exc))
        args.out.mkdir(parents=True, exist_ok=True)
        written = finish_report(results, args.out, plots=not args.no_plots,
                                compare=args.compare)
        print(f"wrote {written}")
        return 0
    try:
        if args.plan and args.out is None:
            args.out = Path(".")
        config = make_config(args, argv)
    except ValueError as exc:
        parser.error(str(exc))
    if args.plan:
        with_compile = "compile" in config.candidate_keys
        n_cands = (len(config.candidate_keys) - 1 + len(config.ours_backends)
                   if "ours" in config.candidate_keys else len(config.candidate_keys))
        summary = budget.plan_run(config.cases, config.ops, n_cands, with_compile=with_compile,
                                  jit_keys=[k for k in config.candidate_keys
                                            if k in budget.JIT_S_PER_VARIANT],
                                  quick=config.mode == "quick")
        print(f"mode {config.mode}, ops {','.join(config.ops)}: {summary.describe()}; "
              f"time budget {config.time_budget_s} s, compile budget "
              f"{config.compile_budget_s} s")
        return 0
    run(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
