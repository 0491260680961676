"""Autograd-enabled ``rmsnorm``: the entry point trainers call.

The forward and backward are the ``miles_ext_kernels::rmsnorm_*`` custom ops (registered
autograd, fake impls), so ``torch.compile(fullgraph=True)`` traces a block using ``rmsnorm``
without a graph break and activation checkpointing recomputes identical bits.

Weight gradient (``weight_grad``):

* ``"param"`` (default): ``w.grad`` in ``w.dtype``, rounded once from the FP32 ``dw``;
* ``"fp32"``: the FP32 ``dw`` without rounding. Autograd always delivers a gradient in the
  dtype of its tensor, so this needs an FP32 ``w`` (e.g. FP32 weights with BF16 activations);
  a BF16 ``w`` is refused with a pointer to ``"main_grad"``;
* ``"main_grad"`` (Megatron style): ``dw`` (FP32) is added to ``w.main_grad`` (created as FP32
  zeros when absent). When ``w`` has Megatron's ``grad_added_to_main_grad`` attribute it is set
  to True and a zero gradient is returned so the grad hooks still fire; otherwise ``w.grad``
  stays None. A present ``w.main_grad`` must be a tensor of ``w``'s shape and device with a
  dtype of :data:`MAIN_GRAD_DTYPES`; it is checked in the forward (when a backward can follow)
  and again in the backward (Megatron may attach it lazily), before anything is written. A
  frozen ``w`` leaves ``main_grad`` alone. This mode uses an eager ``autograd.Function``
  (mutating an attribute of ``w``), so under ``torch.compile`` it causes a graph break.

Autocast: the ops run with autocast off. When autocast is on for the device of ``x`` and ``x``
(or ``residual``) is FP32, it is cast to the autocast dtype so the low-precision kernels run
(gradients flow back through the cast); BF16/FP16 activations and BF16/FP32 weights are kept
as they are (the weight is never down-cast: FP32 weights are a supported input).
"""

from __future__ import annotations

import torch

from miles_ext_kernels.cake import custom_ops  # registers the ops
from miles_ext_kernels.cake.ops import rmsnorm as ops

__all__ = ["WEIGHT_GRAD_MODES", "rmsnorm"]

WEIGHT_GRAD_MODES: tuple[str, ...] = ("param", "fp32", "main_grad")
# The dtypes a ``w.main_grad`` may have: the FP32 ``dw`` is added to it in place.
MAIN_GRAD_DTYPES: tuple[torch.dtype, ...] = (torch.float32, torch.bfloat16, torch.float16,
                                             torch.float64)


def check_weight_grad(weight_grad: object) -> str:
    """``weight_grad`` if it is one of :data:`WEIGHT_GRAD_MODES`, else a ``ValueError``."""
    if not isinstance(weight_grad, str) or weight_grad not in WEIGHT_GRAD_MODES:
        raise ValueError(f"weight_grad must be one of {WEIGHT_GRAD_MODES}, got {weight_grad!r}")
    return weight_grad


def check_strict(strict: object) -> bool | None:
    """``strict`` if it is a bool or None, else a ``TypeError``."""
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool or None, got {type(strict).__name__}")
    return strict


def _check_main_grad(w: torch.Tensor) -> torch.Tensor | None:
    """``w.main_grad`` if ``dw`` can be added to it in place; None when it is absent (the
    backward then creates it). Raises ``TypeError`` / ``ValueError`` naming ``w.main_grad``."""
    main_grad = getattr(w, "main_grad", None)
    if main_grad is None:
        return None
    if not isinstance(main_grad, torch.Tensor):
        raise TypeError(
            f"w.main_grad must be a torch.Tensor (weight_grad='main_grad' adds the FP32 dw to it "
            f"in place) or absent, got {type(main_grad).__name__}")
    if main_grad.dtype not in MAIN_GRAD_DTYPES:
        names = ", ".join(str(d).replace("torch.", "") for d in MAIN_GRAD_DTYPES)
        raise TypeError(f"w.main_grad must have dtype {names} to take the FP32 dw in place; "
                        f"got {main_grad.dtype}")
    if main_grad.device != w.device:
        raise ValueError(f"w.main_grad is on {main_grad.device} but w is on {w.device}; "
                         "allocate it on the weight's device")
    if main_grad.shape != w.shape:
        raise ValueError(f"w.main_grad must have the shape of w {tuple(w.shape)}; "
                         f"got {tuple(main_grad.shape)}")
    return main_grad


def _autocast_activation(t: torch.Tensor | None) -> torch.Tensor | None:
    """``t`` cast to the autocast dtype when it is FP32 and autocast (BF16/FP16) is on for its
    device; else ``t`` (meta tensors included: autocast does not know that device)."""
    if t is None or t.dtype != torch.float32:
        return t
    device_type = t.device.type
    if not custom_ops.autocast_enabled(device_type):
        return t
    target = torch.get_autocast_dtype(device_type)
    if target not in (torch.bfloat16, torch.float16):
        return t
    return t.to(target)


def _run_forward(via_custom_ops, x, w, residual, eps, deterministic, zcg, cbwm, backend, strict):
    """``(y, rstd, normalised input, h_new or None)``, through the registered custom ops (what
    torch.compile traces) or their implementations (same bits, less host cost)."""
    if residual is None:
        if via_custom_ops:
            y, rstd = torch.ops.miles_ext_kernels.rmsnorm_fwd(
                x, w, eps, zcg, cbwm, deterministic, backend, strict)
        else:
            y, rstd = custom_ops.forward_impl(x, w, eps, zcg, cbwm, backend, strict)
        return y, rstd, x, None
    if via_custom_ops:
        y, rstd, h_new = torch.ops.miles_ext_kernels.rmsnorm_residual_fwd(
            x, residual, w, eps, zcg, cbwm, deterministic, backend, strict)
    else:
        y, rstd, h_new = custom_ops.residual_forward_impl(x, residual, w, eps, zcg, cbwm,
                                                          backend, strict)
    return y, rstd, h_new, h_new


def _run_backward(via_custom_ops, ctx, normalised, w, rstd, grad_y, grad_h_new):
    """``(dx, dw FP32)`` for the incoming gradients (a missing one counts as zeros)."""
    deterministic, zcg, cbwm, backend, strict = ctx.options
    g = torch.zeros_like(normalised) if grad_y is None else grad_y.to(normalised.dtype)
    g_residual = None
    if ctx.has_residual and grad_h_new is not None:
        g_residual = grad_h_new.to(normalised.dtype)
    if via_custom_ops:
        return torch.ops.miles_ext_kernels.rmsnorm_bwd(
            g, normalised, w, rstd, g_residual, deterministic, zcg, cbwm, backend, strict)
    return custom_ops.backward_impl(g, normalised, w, rstd, g_residual, deterministic, zcg,
                                    cbwm, backend, strict)


def _outputs(y, h_new):
    return y if h_new is None else (y, h_new)


class _EagerRMSNorm(torch.autograd.Function):
    """Eager-mode RMSNorm: calls the op implementations directly (same bits as the custom ops,
    without the torch.library dispatch's host cost); torch.compile traces the custom ops."""

    @staticmethod
    def forward(ctx, x, w, residual, eps, deterministic, zcg, cbwm, backend, strict):
        y, rstd, normalised, h_new = _run_forward(False, x, w, residual, eps, deterministic,
                                                  zcg, cbwm, backend, strict)
        ctx.save_for_backward(normalised, w, rstd)
        ctx.has_residual = residual is not None
        ctx.options = (deterministic, zcg, cbwm, backend, strict)
        return _outputs(y, h_new)

    @staticmethod
    def backward(ctx, grad_y, grad_h_new=None):
        normalised, w, rstd = ctx.saved_tensors
        dx, dw = _run_backward(False, ctx, normalised, w, rstd, grad_y, grad_h_new)
        grad_w = dw.to(w.dtype) if ctx.needs_input_grad[1] else None
        grad_residual = dx if ctx.has_residual else None
        return dx, grad_w, grad_residual, None, None, None, None, None, None


class _MainGradRMSNorm(torch.autograd.Function):
    """RMSNorm whose weight gradient is accumulated into ``w.main_grad`` (FP32)."""

    @staticmethod
    def forward(ctx, x, w, residual, eps, deterministic, zcg, cbwm, backend, strict):
        y, rstd, normalised, h_new = _run_forward(True, x, w, residual, eps, deterministic,
                                                  zcg, cbwm, backend, strict)
        ctx.save_for_backward(normalised, rstd)
        ctx.weight = w
        ctx.has_residual = residual is not None
        ctx.options = (deterministic, zcg, cbwm, backend, strict)
        return _outputs(y, h_new)

    @staticmethod
    def backward(ctx, grad_y, grad_h_new=None):
        normalised, rstd = ctx.saved_tensors
        w = ctx.weight
        # Checked again here: main_grad may be attached or replaced after the forward.
        main_grad = _check_main_grad(w) if ctx.needs_input_grad[1] else None
        dx, dw = _run_backward(True, ctx, normalised, w, rstd, grad_y, grad_h_new)
        grad_residual = dx if ctx.has_residual else None
        if not ctx.needs_input_grad[1]:  # a frozen w: its main_grad is left alone
            return dx, None, grad_residual, None, None, None, None, None, None
        if main_grad is None:
            w.main_grad = dw
        else:
            main_grad.add_(dw)
        grad_w = None
        if hasattr(w, "grad_added_to_main_grad"):
            w.grad_added_to_main_grad = True
            grad_w = torch.zeros_like(w)
        return dx, grad_w, grad_residual, None, None, None, None, None, None


def rmsnorm(
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float = 1e-6,
    *,
    residual: torch.Tensor | None = None,
    deterministic: bool = True,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    weight_grad: str = "param",
    backend: str | None = None,
    strict: bool | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Autograd-enabled RMSNorm of ``x`` ``[..., H]`` with weight ``w`` ``[H]``.

    Returns ``y``, or ``(y, h_new)`` with ``residual`` (``h_new = x + residual`` rounded to
    ``x.dtype``, normalised and returned so it can be carried to the next layer; the gradient
    of ``x`` and of ``residual`` is the same tensor). Contracts: default
    ``y = round((x * r) * w)``; ``cast_before_weight_mul``: ``round(round(x * r) * w)``;
    ``zero_centered_gamma``: the weight is ``1 + w`` (FP32). ``deterministic=False`` allows a
    non-deterministic weight-gradient route. ``weight_grad``: ``"param"``, ``"fp32"`` or
    ``"main_grad"`` (module docstring). ``backend`` / ``strict``: see
    :mod:`miles_ext_kernels.cake.dispatch`.
    """
    check_weight_grad(weight_grad)
    ops._check_bool(deterministic, "deterministic")
    if isinstance(x, torch.Tensor):
        x = _autocast_activation(x)
    if isinstance(residual, torch.Tensor):
        residual = _autocast_activation(residual)
    eps = ops.validate_forward_args(x, w, eps, residual, zero_centered_gamma,
                                    cast_before_weight_mul)
    backend_name = None if backend is None else str(backend)
    if backend_name is not None:
        from miles_ext_kernels.cake.dispatch import resolve_backend

        resolve_backend(backend_name)
    check_strict(strict)
    if weight_grad == "fp32" and w.dtype != torch.float32 and w.requires_grad:
        raise ValueError(
            f"weight_grad='fp32' needs an FP32 w (autograd delivers a gradient in the dtype of "
            f"its tensor, here {w.dtype}); use weight_grad='main_grad' to accumulate the FP32 "
            "gradient into w.main_grad, or rmsnorm_backward for the raw FP32 dw")
    if weight_grad == "main_grad":
        if torch.is_grad_enabled() and w.requires_grad:
            _check_main_grad(w)  # a bad main_grad fails here, before any backward work
        return _MainGradRMSNorm.apply(x, w, residual, eps, deterministic, zero_centered_gamma,
                                      cast_before_weight_mul, backend_name, strict)
    if not torch.compiler.is_compiling():
        return _EagerRMSNorm.apply(x, w, residual, eps, deterministic, zero_centered_gamma,
                                   cast_before_weight_mul, backend_name, strict)
    y, _rstd, _normalised, h_new = _run_forward(True, x, w, residual, eps, deterministic,
                                                zero_centered_gamma, cast_before_weight_mul,
                                                backend_name, strict)
    return _outputs(y, h_new)
