"""``RMSNorm`` nn.Module over :func:`miles_ext_kernels.cake.autograd.rmsnorm`."""

from __future__ import annotations

import torch
from torch import nn

from miles_ext_kernels.cake.autograd import WEIGHT_GRAD_MODES, rmsnorm
from miles_ext_kernels.cake.dispatch import resolve_backend

__all__ = ["RMSNorm"]


class RMSNorm(nn.Module):
    """RMSNorm with a ``[hidden_size]`` weight; ``forward(x, residual=None)``.

    Returns ``y``, or ``(y, h_new)`` with a residual (fused ``h_new = x + residual``). The
    weight starts at ones, or zeros with ``zero_centered_gamma`` (the effective weight is
    ``1 + w``). ``dtype`` defaults to the default dtype of torch (use ``torch.bfloat16`` or
    ``torch.float32``; FP32 weights with BF16 activations are supported). Other options are
    those of :func:`~miles_ext_kernels.cake.autograd.rmsnorm`.
    """

    def __init__(
        self,
        hidden_size: int,
        eps: float = 1e-6,
        *,
        zero_centered_gamma: bool = False,
        cast_before_weight_mul: bool = False,
        deterministic: bool = True,
        weight_grad: str = "param",
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
        backend: str | None = None,
        strict: bool | None = None,
    ) -> None:
        super().__init__()
        if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size must be a positive int, got {hidden_size!r}")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
            raise ValueError(f"eps must be a non-negative number, got {eps!r}")
        if weight_grad not in WEIGHT_GRAD_MODES:
            raise ValueError(f"weight_grad must be one of {WEIGHT_GRAD_MODES}, "
                             f"got {weight_grad!r}")
        if backend is not None:
            resolve_backend(backend)
        self.hidden_size = hidden_size
        self.eps = float(eps)
        self.zero_centered_gamma = bool(zero_centered_gamma)
        self.cast_before_weight_mul = bool(cast_before_weight_mul)
        self.deterministic = bool(deterministic)
        self.weight_grad = weight_grad
        self.backend = backend
        self.strict = strict
        self.weight = nn.Parameter(torch.empty(hidden_size, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Ones (zeros when zero-centred: the effective weight ``1 + w`` is then ones)."""
        with torch.no_grad():
            if self.zero_centered_gamma:
                self.weight.zero_()
            else:
                self.weight.fill_(1.0)

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Normalise ``x`` (after adding ``residual`` when given)."""
        return rmsnorm(
            x, self.weight, self.eps, residual=residual, deterministic=self.deterministic,
            zero_centered_gamma=self.zero_centered_gamma,
            cast_before_weight_mul=self.cast_before_weight_mul, weight_grad=self.weight_grad,
            backend=self.backend, strict=self.strict)

    def extra_repr(self) -> str:
        """Size, eps and the options that differ from the defaults."""
        parts = [f"{self.hidden_size}", f"eps={self.eps}"]
        if self.zero_centered_gamma:
            parts.append("zero_centered_gamma=True")
        if self.cast_before_weight_mul:
            parts.append("cast_before_weight_mul=True")
        if not self.deterministic:
            parts.append("deterministic=False")
        if self.weight_grad != "param":
            parts.append(f"weight_grad={self.weight_grad!r}")
        if self.backend is not None:
            parts.append(f"backend={self.backend!r}")
        if self.strict is not None:
            parts.append(f"strict={self.strict}")
        return ", ".join(parts)
