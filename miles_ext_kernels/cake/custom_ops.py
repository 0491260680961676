"""torch.library custom ops of the RMSNorm training op, with fake impls and autograd.

Ops (namespace ``miles_ext_kernels``):

* ``rmsnorm_fwd(x, w, eps, zero_centered_gamma, cast_before_weight_mul, deterministic,
  backend, strict) -> (y, rstd)``
* ``rmsnorm_residual_fwd(x, residual, w, eps, ...same...) -> (y, rstd, h_new)``
* ``rmsnorm_bwd(g, x, w, rstd, g_residual, deterministic, zero_centered_gamma,
  cast_before_weight_mul, backend, strict) -> (dx, dw)`` (``dw`` FP32)

The forward ops carry ``deterministic`` only for their registered backward. Fake impls make
``torch.compile(fullgraph=True)`` trace through without a graph break. The backward op reuses a
zeroed workspace cached per (device, stream, hidden, size): CUDA graph capture and replay need
no per-call allocation besides the outputs (the kernels leave the counters zero); a capture on a
stream without one gives each call its own, and the cached ones live outside CUDA-graph memory
pools (``backends.programs.cached_workspace``). Autocast is
switched off inside the ops; :func:`miles_ext_kernels.cake.autograd.rmsnorm` decides the
dtypes before calling them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Optional, TypeVar

import torch

from miles_ext_kernels.cake.backends import programs
from miles_ext_kernels.cake.ops import rmsnorm as ops

__all__ = [
    "NAMESPACE",
    "autocast_enabled",
    "forward_impl",
    "residual_forward_impl",
    "backward_impl",
    "rmsnorm_fwd",
    "rmsnorm_residual_fwd",
    "rmsnorm_bwd",
    "cached_workspace",
    "clear_workspace_cache",
]

NAMESPACE = "miles_ext_kernels"
_T = TypeVar("_T")

# The workspace cache lives with the program backend (direct API calls use it too).
cached_workspace = programs.cached_workspace
clear_workspace_cache = programs.clear_workspace_cache


# ----------------------------------------------------------------------------- implementations
# Plain functions behind the custom ops; the eager autograd path calls them directly (the
# torch.library dispatch costs far more host time than the kernels at small shapes).


def autocast_enabled(device_type: str) -> bool:
    """Whether autocast is on for ``device_type``; False for a device type autocast does not
    know (``meta``: torch raises "unknown device type for autocast" there)."""
    try:
        return torch.is_autocast_enabled(device_type)
    except RuntimeError:
        return False


def _autocast_off(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Run ``fn`` with autocast disabled for its first tensor's device (a no-op when it is off:
    entering the context costs host time on every call)."""

    @functools.wraps(fn)
    def wrapper(first: torch.Tensor, *args: Any) -> _T:
        device_type = first.device.type
        if not autocast_enabled(device_type):
            return fn(first, *args)
        with torch.autocast(device_type=device_type, enabled=False):
            return fn(first, *args)

    return wrapper


@_autocast_off
def forward_impl(x: torch.Tensor, w: torch.Tensor, eps: float, zero_centered_gamma: bool,
                 cast_before_weight_mul: bool, backend: str | None,
                 strict: bool | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(y, rstd)`` with autocast off (see ``ops.rmsnorm.rmsnorm_forward``)."""
    y, rstd = ops.rmsnorm_forward(x, w, eps, zero_centered_gamma=zero_centered_gamma,
                                  cast_before_weight_mul=cast_before_weight_mul,
                                  backend=backend, strict=strict)
    return y, rstd


@_autocast_off
def residual_forward_impl(x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor, eps: float,
                          zero_centered_gamma: bool, cast_before_weight_mul: bool,
                          backend: str | None, strict: bool | None,
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(y, rstd, h_new)`` with autocast off (see ``ops.rmsnorm.rmsnorm_forward``)."""
    y, rstd, h_new = ops.rmsnorm_forward(
        x, w, eps, residual=residual, zero_centered_gamma=zero_centered_gamma,
        cast_before_weight_mul=cast_before_weight_mul, backend=backend, strict=strict)
    return y, rstd, h_new


@_autocast_off
def backward_impl(g: torch.Tensor, x: torch.Tensor, w: torch.Tensor, rstd: torch.Tensor,
                  g_residual: torch.Tensor | None, deterministic: bool,
                  zero_centered_gamma: bool, cast_before_weight_mul: bool,
                  backend: str | None, strict: bool | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dx, dw FP32)`` with autocast off; program backends reuse the zeroed workspace cached
    per (device, stream) (``backends.programs.cached_workspace``)."""
    return ops.rmsnorm_backward(
        g, x, w, rstd, deterministic=deterministic, g_residual=g_residual,
        zero_centered_gamma=zero_centered_gamma, cast_before_weight_mul=cast_before_weight_mul,
        backend=backend, strict=strict)


# ----------------------------------------------------------------------------- forward ops


@torch.library.custom_op(f"{NAMESPACE}::rmsnorm_fwd", mutates_args=())
def rmsnorm_fwd(
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float,
    zero_centered_gamma: bool,
    cast_before_weight_mul: bool,
    deterministic: bool,
    backend: Optional[str],  # noqa: UP045 (schema inference on torch 2.11)
    strict: Optional[bool],  # noqa: UP045 (schema inference on torch 2.11)
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm forward: ``(y, rstd)`` (see ``ops.rmsnorm.rmsnorm_forward``)."""
    return forward_impl(x, w, eps, zero_centered_gamma, cast_before_weight_mul, backend, strict)


@rmsnorm_fwd.register_fake
def _rmsnorm_fwd_fake(x, w, eps, zero_centered_gamma, cast_before_weight_mul, deterministic,
                      backend, strict):
    return x.new_empty(x.shape), x.new_empty(x.shape[:-1], dtype=torch.float32)


@torch.library.custom_op(f"{NAMESPACE}::rmsnorm_residual_fwd", mutates_args=())
def rmsnorm_residual_fwd(
    x: torch.Tensor,
    residual: torch.Tensor,
    w: torch.Tensor,
    eps: float,
    zero_centered_gamma: bool,
    cast_before_weight_mul: bool,
    deterministic: bool,
    backend: Optional[str],  # noqa: UP045 (schema inference on torch 2.11)
    strict: Optional[bool],  # noqa: UP045 (schema inference on torch 2.11)
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fused residual-add RMSNorm forward: ``(y, rstd, h_new)`` with ``h_new = x + residual``."""
    return residual_forward_impl(x, residual, w, eps, zero_centered_gamma,
                                 cast_before_weight_mul, backend, strict)


@rmsnorm_residual_fwd.register_fake
def _rmsnorm_residual_fwd_fake(x, residual, w, eps, zero_centered_gamma, cast_before_weight_mul,
                               deterministic, backend, strict):
    return (x.new_empty(x.shape), x.new_empty(x.shape[:-1], dtype=torch.float32),
            x.new_empty(x.shape))


# ----------------------------------------------------------------------------- backward op


@torch.library.custom_op(f"{NAMESPACE}::rmsnorm_bwd", mutates_args=())
def rmsnorm_bwd(
    g: torch.Tensor,
    x: torch.Tensor,
    w: torch.Tensor,
    rstd: torch.Tensor,
    g_residual: Optional[torch.Tensor],  # noqa: UP045 (schema inference on torch 2.11)
    deterministic: bool,
    zero_centered_gamma: bool,
    cast_before_weight_mul: bool,
    backend: Optional[str],  # noqa: UP045 (schema inference on torch 2.11)
    strict: Optional[bool],  # noqa: UP045 (schema inference on torch 2.11)
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm backward: ``(dx, dw FP32)`` (see ``ops.rmsnorm.rmsnorm_backward``)."""
    return backward_impl(g, x, w, rstd, g_residual, deterministic, zero_centered_gamma,
                         cast_before_weight_mul, backend, strict)


@rmsnorm_bwd.register_fake
def _rmsnorm_bwd_fake(g, x, w, rstd, g_residual, deterministic, zero_centered_gamma,
                      cast_before_weight_mul, backend, strict):
    return x.new_empty(x.shape), x.new_empty((x.shape[-1],), dtype=torch.float32)


# ----------------------------------------------------------------------------- autograd


def _as_grad(grad: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    if grad is None:
        return torch.zeros_like(like)
    return grad if grad.dtype == like.dtype else grad.to(like.dtype)


def _setup_fwd(ctx, inputs, output) -> None:
    x, w, _eps, zero_centered_gamma, cast_before_weight_mul, deterministic, backend, strict = (
        inputs)
    _y, rstd = output
    ctx.save_for_backward(x, w, rstd)
    ctx.options = (deterministic, zero_centered_gamma, cast_before_weight_mul, backend, strict)


def _backward_fwd(ctx, grad_y, _grad_rstd):
    x, w, rstd = ctx.saved_tensors
    deterministic, zcg, cbwm, backend, strict = ctx.options
    dx, dw = torch.ops.miles_ext_kernels.rmsnorm_bwd(
        _as_grad(grad_y, x), x, w, rstd, None, deterministic, zcg, cbwm, backend, strict)
    return dx, dw.to(w.dtype), None, None, None, None, None, None


def _setup_residual_fwd(ctx, inputs, output) -> None:
    (_x, _residual, w, _eps, zero_centered_gamma, cast_before_weight_mul, deterministic,
     backend, strict) = inputs
    _y, rstd, h_new = output
    ctx.save_for_backward(h_new, w, rstd)
    ctx.options = (deterministic, zero_centered_gamma, cast_before_weight_mul, backend, strict)


def _backward_residual_fwd(ctx, grad_y, _grad_rstd, grad_h_new):
    h_new, w, rstd = ctx.saved_tensors
    deterministic, zcg, cbwm, backend, strict = ctx.options
    g_residual = grad_h_new.to(h_new.dtype) if grad_h_new is not None else None
    dx, dw = torch.ops.miles_ext_kernels.rmsnorm_bwd(
        _as_grad(grad_y, h_new), h_new, w, rstd, g_residual, deterministic, zcg, cbwm, backend,
        strict)
    return dx, dx, dw.to(w.dtype), None, None, None, None, None, None


rmsnorm_fwd.register_autograd(_backward_fwd, setup_context=_setup_fwd)
rmsnorm_residual_fwd.register_autograd(_backward_residual_fwd,
                                       setup_context=_setup_residual_fwd)
