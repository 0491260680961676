"""Accuracy of each candidate against an FP64 reference, under the project's budget.

Budget (design brief §5): ``y`` and ``dx`` within atol = rtol = 1e-2; ``dw`` per element
``|dw - ref| <= 1e-4 + 1e-4 * |ref|``. The reference normalises exactly what the call
normalises: ``x``, or for the residual form ``h_new = round_to_x_dtype(x + u)``, with the
default rounding contract ``y = (x * r) * w``; ``dx`` includes ``g_h`` for residual calls.
The harness checks one input set per case (the CI tests check 5 seeds).

Large cases are processed in row chunks: the reference ``y`` / ``dx`` are kept in FP32 (their
tolerance is 1e-2, FP32 rounding is 6e-8) and ``dw`` in FP64.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from benchmarks.rmsnorm.inputs import InputSet

EPS = 1e-6
DX_ATOL = DX_RTOL = 1e-2
DW_ATOL = DW_RTOL = 1e-4
CHUNK_ELEMENTS = 1 << 25


@dataclass
class Reference:
    """FP64-derived reference outputs as ``[rows, H]`` (y, dx in FP32) and ``[H]`` (dw, FP64)."""

    y: torch.Tensor
    dx: torch.Tensor
    dw: torch.Tensor
    h: torch.Tensor | None


@dataclass
class Accuracy:
    """Worst error-to-tolerance ratios (<= 1 passes) and the derived verdicts."""

    y_ratio: float
    dx_ratio: float
    dw_ratio: float
    y_dtype: str
    dw_dtype: str
    y_ok: bool
    dx_ok: bool
    dw_ok: bool
    dw_fp32: bool

    @property
    def fwd_ok(self) -> bool:
        """Forward output in budget."""
        return self.y_ok

    @property
    def bwd_ok(self) -> bool:
        """Backward in budget with an FP32 ``dw`` (the peer-eligibility rule)."""
        return self.dx_ok and self.dw_ok and self.dw_fp32

    def ok_for(self, op: str) -> bool:
        """Whether this candidate's outputs meet the budget for ``op`` (fwd, bwd or step)."""
        if op == "fwd":
            return self.fwd_ok
        if op == "bwd":
            return self.bwd_ok
        return self.fwd_ok and self.bwd_ok

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict including the verdicts."""
        data: dict[str, object] = asdict(self)
        data.update(fwd_ok=self.fwd_ok, bwd_ok=self.bwd_ok)
        return data


def _rows(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape(-1, tensor.shape[-1])


def _chunk_rows(rows: int, hidden: int) -> int:
    return max(1, min(rows, CHUNK_ELEMENTS // max(hidden, 1)))


def fp64_reference(inp: InputSet, eps: float = EPS) -> Reference:
    """The FP64 reference for one input set (see the module docstring)."""
    x = _rows(inp.x)
    g = _rows(inp.g)
    u = _rows(inp.u) if inp.u is not None else None
    g_h = _rows(inp.g_h) if inp.g_h is not None else None
    rows, hidden = x.shape
    w = inp.w.double()
    y_ref = torch.empty((rows, hidden), dtype=torch.float32, device=x.device)
    dx_ref = torch.empty_like(y_ref)
    h_ref = torch.empty_like(x) if u is not None else None
    dw = torch.zeros(hidden, dtype=torch.float64, device=x.device)
    step = _chunk_rows(rows, hidden)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        xs = x[start:stop]
        if u is not None:
            hs = (xs.double() + u[start:stop].double()).to(x.dtype)
            h_ref[start:stop] = hs  # type: ignore[index]
            xs = hs
        xd = xs.double()
        r = torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps)
        xhat = xd * r
        y_ref[start:stop] = (xhat * w).float()
        gd = g[start:stop].double()
        gw = gd * w
        dxd = r * (gw - xhat * (gw * xhat).mean(-1, keepdim=True))
        if g_h is not None:
            dxd = dxd + g_h[start:stop].double()
        dx_ref[start:stop] = dxd.float()
        dw += (gd * xhat).sum(0)
    return Reference(y=y_ref, dx=dx_ref, dw=dw, h=h_ref)


def _worst_ratio(actual: torch.Tensor, reference: torch.Tensor, atol: float, rtol: float) -> float:
    """max |a - ref| / (atol + rtol |ref|) over all elements (inf when anything is non-finite)."""
    actual = _rows(actual)
    reference = _rows(reference)
    if actual.shape != reference.shape:
        raise ValueError(f"output shape {tuple(actual.shape)} != reference "
                         f"{tuple(reference.shape)}")
    rows, hidden = reference.shape
    worst = 0.0
    step = _chunk_rows(rows, hidden)
    for start in range(0, rows, step):
        a = actual[start:start + step].double()
        ref = reference[start:start + step].double()
        if not bool(torch.isfinite(a).all()):
            return float("inf")
        ratio = ((a - ref).abs() / (atol + rtol * ref.abs())).max()
        worst = max(worst, float(ratio))
    return worst


def check(reference: Reference, y: torch.Tensor, dx: torch.Tensor, dw: torch.Tensor,
          x_dtype: torch.dtype) -> Accuracy:
    """Compare one candidate's ``y``, ``dx``, ``dw`` with ``reference``."""
    y, dx, dw = y.detach(), dx.detach(), dw.detach()
    y_ratio = _worst_ratio(y, reference.y, DX_RTOL, DX_ATOL)
    dx_ratio = _worst_ratio(dx, reference.dx, DX_ATOL, DX_RTOL)
    dw_ratio = _worst_ratio(dw.reshape(1, -1), reference.dw.reshape(1, -1), DW_ATOL, DW_RTOL)
    return Accuracy(
        y_ratio=y_ratio,
        dx_ratio=dx_ratio,
        dw_ratio=dw_ratio,
        y_dtype=str(y.dtype).replace("torch.", ""),
        dw_dtype=str(dw.dtype).replace("torch.", ""),
        y_ok=y_ratio <= 1.0 and y.dtype == x_dtype,
        dx_ok=dx_ratio <= 1.0,
        dw_ok=dw_ratio <= 1.0,
        dw_fp32=dw.dtype == torch.float32,
    )
