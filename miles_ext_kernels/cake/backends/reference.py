"""PyTorch reference RMSNorm forward / backward with the exact rounding contracts.

Runs on any device (CPU included) and is the fallback when no Cake program covers a call.
Inputs are 2-D ``[rows, hidden]`` tensors already validated by the op facade.

Contracts (``X`` = the dtype of ``x``, ``round`` = rounding to ``X``):

* statistics in FP32: ``r = 1 / sqrt(mean_j(x_j * x_j) + eps)`` (IEEE division and sqrt);
* ``w_eff = w`` in FP32, or ``1 + w`` in FP32 with ``zero_centered_gamma``;
* default: ``y = round((x * r) * w_eff)``;
  ``cast_before_weight_mul`` (Hugging Face style): ``y = round(round(x * r) * w_eff)``;
* residual form: ``h_new = round(h + u)`` is normalised and returned;
* backward: ``dx = round(r * (g * w_eff - xhat * mean(g * w_eff * xhat)) [+ g_h])`` in FP32
  with the unrounded ``xhat = x * r`` (the gradient of the smooth function; rounding is a
  straight-through step), and ``dw = fp32(sum_rows(g * xhat))`` accumulated in FP64 from
  exact products, where ``xhat`` is ``round(x * r)`` under ``cast_before_weight_mul`` (the
  value that actually multiplied the weight) and ``x * r`` otherwise.
"""

from __future__ import annotations

import torch

__all__ = ["reference_forward", "reference_backward", "effective_weight"]


def effective_weight(w: torch.Tensor, zero_centered_gamma: bool) -> torch.Tensor:
    """The FP32 weight that multiplies the normalised input (``1 + w`` when zero-centred)."""
    w32 = w.to(torch.float32)
    return w32 + 1.0 if zero_centered_gamma else w32


def _rstd(x32: torch.Tensor, eps: float) -> torch.Tensor:
    """Per-row ``1 / sqrt(mean(x^2) + eps)`` in FP32 with IEEE sqrt and division."""
    mean_square = torch.mean(x32 * x32, dim=-1)
    eps32 = torch.tensor(eps, dtype=torch.float32, device=x32.device)
    return torch.reciprocal(torch.sqrt(mean_square + eps32))


def reference_forward(
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float,
    *,
    residual: torch.Tensor | None = None,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
) -> tuple[torch.Tensor, ...]:
    """Forward of ``[rows, hidden]`` inputs: ``(y, rstd)`` or ``(y, rstd, h_new)``.

    ``y`` and ``h_new`` are contiguous in ``x.dtype``; ``rstd`` is FP32 ``[rows]``.
    """
    out_dtype = x.dtype
    if residual is not None:
        # FP32 holds the exact sum of two BF16/FP16 values up to one innocuous double rounding.
        h_new = (x.to(torch.float32) + residual.to(torch.float32)).to(out_dtype).contiguous()
        normalised = h_new
    else:
        h_new = None
        normalised = x
    x32 = normalised.to(torch.float32)
    rstd = _rstd(x32, eps)
    xhat = x32 * rstd.unsqueeze(-1)
    if cast_before_weight_mul:
        xhat = xhat.to(out_dtype).to(torch.float32)
    y = (xhat * effective_weight(w, zero_centered_gamma)).to(out_dtype).contiguous()
    if h_new is not None:
        return y, rstd, h_new
    return y, rstd


def reference_backward(
    g: torch.Tensor,
    x: torch.Tensor,
    w: torch.Tensor,
    rstd: torch.Tensor,
    *,
    g_residual: torch.Tensor | None = None,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Backward of ``[rows, hidden]`` inputs: ``(dx in x.dtype, dw in FP32 [hidden])``.

    ``x`` is the normalised tensor (``h_new`` of the residual form) and ``rstd`` the FP32
    ``[rows]`` returned by the forward. ``g_residual`` (the gradient flowing directly into
    ``h_new``) is added in FP32 before the single rounding of ``dx``.
    """
    out_dtype = x.dtype
    x32 = x.to(torch.float32)
    r = rstd.to(torch.float32).reshape(-1, 1)
    g32 = g.to(torch.float32)
    w_eff = effective_weight(w, zero_centered_gamma)
    xhat = x32 * r
    gw = g32 * w_eff
    mean_term = torch.mean(gw * xhat, dim=-1, keepdim=True)
    dx32 = r * (gw - xhat * mean_term)
    if g_residual is not None:
        dx32 = dx32 + g_residual.to(torch.float32)
    dx = dx32.to(out_dtype).contiguous()
    xhat_w = xhat.to(out_dtype).to(torch.float32) if cast_before_weight_mul else xhat
    # g (<= 24 significant bits) times an FP32 xhat is exact in FP64; one final rounding.
    dw = torch.sum(g.to(torch.float64) * xhat_w.to(torch.float64), dim=0).to(torch.float32)
    return dx, dw
