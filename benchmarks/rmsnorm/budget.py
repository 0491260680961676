"""A rough device-time model: used to skip cases that would overrun the run's time budget and
to print a plan (``--plan``) before spending device time.

The constants are estimates for one H200 (copy ceiling ~4.3 TB/s, L2 flush ~70 us); the hard
bound on a run is ``--time-budget``, which this model only helps to spend well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.rmsnorm.shapes import Case
from benchmarks.rmsnorm.timing import plan_samples

DEFAULT_CEILING_TB_PER_S = 4.3
DEFAULT_FLUSH_US = 140.0  # the evict_last fill and the zero_ of 256 MiB (H200: ~2 x 70 us)
LAUNCH_US = 4.0
COMPILE_S_PER_CASE = 5.0      # torch.compile: inference graph + training fwd/bwd, static shapes
SETUP_S_PER_CANDIDATE = 0.05  # first calls, accuracy check, per case
CAPTURE_S = 0.03              # warm-up calls + graph capture + instantiate, per measurement
PEER_SLOWDOWN = 2.0           # peers are on average this much slower than ideal (eager ~4x)
CASE_BASE_S = 0.2             # inputs, FP64 reference, frees
# First use of a new kernel variant (width, residual, weight dtype) JIT-compiles peers' kernels.
JIT_S_PER_VARIANT = {"liger": 1.5, "quack": 4.0}


def variant(case: Case) -> tuple[int, bool, str]:
    """What a JIT-compiling peer specialises on: width, residual form, weight dtype."""
    return (case.hidden, case.residual, case.w_dtype)


def jit_s(case: Case, seen: set[tuple[int, bool, str]], keys: Sequence[str]) -> float:
    """JIT seconds ``case`` adds for the peers in ``keys`` (updates nothing; see ``seen``)."""
    if variant(case) in seen:
        return 0.0
    return sum(JIT_S_PER_VARIANT.get(key, 0.0) for key in keys)


def est_call_us(case: Case, op: str, ceiling_tb_per_s: float = DEFAULT_CEILING_TB_PER_S) -> float:
    """Expected latency of an ideal call: bytes at the copy ceiling plus launch time."""
    kernels = 3 if op == "step" else 1
    return case.tensor_bytes(op) / (ceiling_tb_per_s * 1e6) + LAUNCH_US * kernels


def estimate_case_s(case: Case, ops: Sequence[str], n_candidates: int, *,
                    with_compile: bool, quick: bool = False, n_sets: int = 3,
                    flush_us: float = DEFAULT_FLUSH_US,
                    ceiling_tb_per_s: float = DEFAULT_CEILING_TB_PER_S) -> float:
    """Estimated device seconds for one case (all ops, all candidates)."""
    total = CASE_BASE_S + n_candidates * SETUP_S_PER_CANDIDATE
    if with_compile:
        total += COMPILE_S_PER_CASE
    for op in ops:
        call_us = est_call_us(case, op, ceiling_tb_per_s)
        plan = plan_samples(call_us, flush_us, quick=quick)
        replay_s = plan.n_inner * (flush_us + call_us * PEER_SLOWDOWN) * 1e-6
        warm_s = 2 * n_sets * call_us * PEER_SLOWDOWN * 1e-6
        total += (n_candidates + 1) * plan.samples * replay_s
        total += n_candidates * (CAPTURE_S + warm_s + replay_s)
    return total


@dataclass
class PlanSummary:
    """What a run would do: sizes and the estimated device time."""

    cases: int
    measurements: int
    estimated_s: float
    compile_s: float
    jit_s: float

    def describe(self) -> str:
        """One paragraph for the console."""
        return (f"{self.cases} cases, {self.measurements} (case, op, candidate) measurements; "
                f"estimated device time {self.estimated_s:.0f} s, of which torch.compile "
                f"{self.compile_s:.0f} s and Liger/QuACK JIT {self.jit_s:.0f} s (before "
                f"budgets; plus ~30 s start-up and our own first nvcc builds if not cached)")


def plan_run(cases: Sequence[Case], ops: Sequence[str], n_candidates: int, *,
             with_compile: bool, jit_keys: Sequence[str] = (), quick: bool = False) -> PlanSummary:
    """Estimate a whole run (excluding process start, JIT builds of ours, and host overhead)."""
    total = jit_total = 0.0
    seen: set[tuple[int, bool, str]] = set()
    for case in cases:
        total += estimate_case_s(case, ops, n_candidates, with_compile=with_compile, quick=quick)
        extra = jit_s(case, seen, jit_keys)
        seen.add(variant(case))
        jit_total += extra
    compile_total = COMPILE_S_PER_CASE * len(cases) if with_compile else 0.0
    return PlanSummary(cases=len(cases), measurements=len(cases) * len(ops) * n_candidates,
                       estimated_s=total + jit_total, compile_s=compile_total, jit_s=jit_total)
