"""``RMSNorm`` nn.Module over :func:`miles_ext_kernels.cake.autograd.rmsnorm`."""

from __future__ import annotations

import torch
from torch import nn

from miles_ext_kernels.cake.autograd import check_strict, check_weight_grad, rmsnorm
from miles_ext_kernels.cake.dispatch import resolve_backend
from miles_ext_kernels.cake.ops.rmsnorm import W_DTYPES, _check_bool, _check_eps

__all__ = ["RMSNorm"]


def _check_hidden_size(hidden_size: object) -> int:
    """``hidden_size`` if it is a positive int, else a ``ValueError``."""
    if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size <= 0:
        raise ValueError(f"hidden_size must be a positive int, got {hidden_size!r}")
    return hidden_size


def _check_dtype(dtype: object) -> torch.dtype | None:
    """``dtype`` if it is None (torch's default) or a weight dtype ``rmsnorm`` takes."""
    if dtype is None:
        return None
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype or None, got {type(dtype).__name__}")
    if dtype not in W_DTYPES:
        names = ", ".join(str(d).replace("torch.", "") for d in W_DTYPES)
        raise TypeError(f"dtype must be one of {names} (the weight dtypes rmsnorm takes); "
                        f"got {dtype}")
    return dtype


class RMSNorm(nn.Module):
    """RMSNorm with a ``[hidden_size]`` weight; ``forward(x, residual=None)``.

    Returns ``y``, or ``(y, h_new)`` with a residual (fused ``h_new = x + residual``). The
    weight starts at ones, or zeros with ``zero_centered_gamma`` (the effective weight is
    ``1 + w``). ``dtype`` defaults to the default dtype of torch (use ``torch.bfloat16`` or
    ``torch.float32``; FP32 weights with BF16 activations are supported). Other options are
    those of :func:`~miles_ext_kernels.cake.autograd.rmsnorm`, checked at construction with
    its error types and messages.
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
        """Check every option as :func:`~miles_ext_kernels.cake.autograd.rmsnorm` does (same
        error types and messages), then create the weight."""
        super().__init__()
        self.hidden_size = _check_hidden_size(hidden_size)
        self.eps = _check_eps(eps)
        self.zero_centered_gamma = _check_bool(zero_centered_gamma, "zero_centered_gamma")
        self.cast_before_weight_mul = _check_bool(cast_before_weight_mul,
                                                  "cast_before_weight_mul")
        self.deterministic = _check_bool(deterministic, "deterministic")
        self.weight_grad = check_weight_grad(weight_grad)
        if backend is not None:
            resolve_backend(backend)
        self.backend = backend
        self.strict = check_strict(strict)
        dtype = _check_dtype(dtype)
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
