"""Host-side cost per call (Python + validation + dispatch + launch), ours against PyTorch's.

Small-T training steps are often host-bound, so the latency a call adds on the CPU matters as
much as the kernel. Each entry runs ``calls`` back-to-back calls of a tiny shape, timed with
``time.perf_counter``, synchronising only before and after (the GPU never holds the CPU back
while the host cost exceeds the kernel time). The best of ``repeats`` runs is reported, along
with a one-kernel baseline (``torch.add``) that shows the floor of any PyTorch launch, and a
Python ``autograd.Function`` of one launch each way that shows the floor of any autograd step
made of one (the engine's handoff to its device thread and the Function's own cost: most of
PyTorch's own step on the H100 machine's CPU, docs/bench/h200/probes/2026-12-05-session66.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from benchmarks.rmsnorm.candidates import EPS, _ours_api

HOST_TOKENS = 4
HOST_HIDDEN = 2048
FUNCTION_FLOOR = "Python autograd.Function fwd+bwd (one launch each: the floor)"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_host(fn: Callable[[], object], device: torch.device, *, calls: int, warmup: int,
              repeats: int = 3) -> float:
    """Best-of-``repeats`` mean host microseconds per call of ``fn``."""
    for _ in range(warmup):
        fn()
    _sync(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        _sync(device)
        best = min(best, 1e6 * (time.perf_counter() - start) / calls)
    return best


def _tiny_inputs(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn((HOST_TOKENS, HOST_HIDDEN), generator=gen, device=device).bfloat16()
    g = torch.randn((HOST_TOKENS, HOST_HIDDEN), generator=gen, device=device).bfloat16()
    w = torch.ones(HOST_HIDDEN, device=device, dtype=torch.bfloat16)
    return x, g, w


class _CloneFunction(torch.autograd.Function):
    """One launch forward, one backward: the floor of an autograd step through a Python
    Function."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad.clone()


def _torch_entries(device: torch.device) -> dict[str, Callable[[], object]]:
    x, g, w = _tiny_inputs(device)
    entries: dict[str, Callable[[], object]] = {
        "torch.add (one-launch floor)": lambda: torch.add(x, g),
        "PyTorch F.rms_norm fwd": lambda: F.rms_norm(x, (HOST_HIDDEN,), w, EPS),
    }
    if hasattr(torch.ops.aten, "_fused_rms_norm"):
        _, rstd_aten = torch.ops.aten._fused_rms_norm(x, [HOST_HIDDEN], w, EPS)
        entries["aten _fused_rms_norm fwd"] = (
            lambda: torch.ops.aten._fused_rms_norm(x, [HOST_HIDDEN], w, EPS))
        entries["aten _fused_rms_norm_backward"] = (
            lambda: torch.ops.aten._fused_rms_norm_backward(g, x, [HOST_HIDDEN], rstd_aten, w,
                                                            [True, True]))
    xg = x.detach().requires_grad_()
    wg = w.detach().requires_grad_()

    def torch_autograd_step() -> object:
        y = F.rms_norm(xg, (HOST_HIDDEN,), wg, EPS)
        return torch.autograd.grad(y, (xg, wg), g)

    entries["PyTorch F.rms_norm fwd+bwd (autograd)"] = torch_autograd_step
    entries[FUNCTION_FLOOR] = lambda: torch.autograd.grad(_CloneFunction.apply(xg), (xg,), g)
    return entries


def _ours_entries(device: torch.device, backend: str | None) -> dict[str, Callable[[], object]]:
    x, g, w = _tiny_inputs(device)
    xg = x.detach().requires_grad_()
    wg = w.detach().requires_grad_()
    api = _ours_api()
    entries: dict[str, Callable[[], object]] = {}
    _, rstd = api.rmsnorm_forward(x, w, EPS, backend=backend)
    workspace = None
    maker = getattr(api, "rmsnorm_workspace", None)
    if maker is not None:
        workspace = maker(HOST_HIDDEN, device, backend=backend)
        if workspace.numel() == 0:
            workspace = None
    entries[f"ours rmsnorm_forward ({backend or 'auto'})"] = (
        lambda: api.rmsnorm_forward(x, w, EPS, backend=backend))
    entries[f"ours rmsnorm_backward ({backend or 'auto'})"] = (
        lambda: api.rmsnorm_backward(g, x, w, rstd, workspace=workspace, backend=backend))
    autograd_fn = getattr(api, "rmsnorm", None)
    if autograd_fn is None:
        try:
            autograd_fn = getattr(__import__("miles_ext_kernels.cake", fromlist=["rmsnorm"]),
                                  "rmsnorm", None)
        except ImportError:
            autograd_fn = None
    if callable(autograd_fn):
        def ours_autograd_step() -> object:
            y = autograd_fn(xg, wg, EPS)
            y = y[0] if isinstance(y, tuple) else y
            return torch.autograd.grad(y, (xg, wg), g)

        entries["ours rmsnorm fwd+bwd (autograd)"] = ours_autograd_step
    return entries


def measure_host_overhead(device: torch.device, *, backend: str | None = None,
                          calls: int = 2000, warmup: int = 200) -> dict[str, object]:
    """Host microseconds per call for ours and PyTorch's calls on a [4, 2048] BF16 input.

    Returns ``{"shape": ..., "calls": ..., "us_per_call": {entry: us}, "errors": {...}}``.
    """
    result: dict[str, object] = {"shape": [HOST_TOKENS, HOST_HIDDEN], "calls": calls,
                                 "backend": backend or "auto"}
    per_call: dict[str, float] = {}
    errors: dict[str, str] = {}
    entries = _torch_entries(device)
    try:
        entries.update(_ours_entries(device, backend))
    except Exception as exc:  # noqa: BLE001 - PyTorch's numbers are still useful
        errors["ours"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    for name, fn in entries.items():
        try:
            per_call[name] = time_host(fn, device, calls=calls, warmup=warmup)
        except Exception as exc:  # noqa: BLE001 - one broken entry must not hide the others
            errors[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    result["us_per_call"] = per_call
    result["errors"] = errors
    return result
