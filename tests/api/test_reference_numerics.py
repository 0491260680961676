"""Reference backend numerics against an FP64 model of every rounding contract (CPU)."""

from __future__ import annotations

import pytest
import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward

SEEDS = range(5)
CONTRACTS = [
    {},
    {"cast_before_weight_mul": True},
    {"zero_centered_gamma": True},
    {"cast_before_weight_mul": True, "zero_centered_gamma": True},
]


def _fp64_model(x, w, g, eps, *, residual=None, g_residual=None, zero_centered_gamma=False,
                cast_before_weight_mul=False, rstd32=None):
    """FP64 forward/backward of the contract on the same rounded inputs."""
    h = x
    if residual is not None:
        h = (x.double() + residual.double()).to(x.dtype)
    x64 = h.double()
    r64 = 1.0 / torch.sqrt((x64 * x64).mean(-1, keepdim=True) + eps)
    w64 = w.double() + 1.0 if zero_centered_gamma else w.double()
    xhat = x64 * r64
    if cast_before_weight_mul:
        # The rounding positions are the contract's: round the FP32 x * r of the FP32 rstd.
        xhat_w = (h.float() * rstd32.reshape(-1, 1)).to(x.dtype).double()
    else:
        xhat_w = xhat
    y = xhat_w * w64
    g64 = g.double()
    gw = g64 * w64
    dx = r64 * (gw - xhat * (gw * xhat).mean(-1, keepdim=True))
    if g_residual is not None:
        dx = dx + g_residual.double()
    dw = (g64 * xhat_w).sum(0)
    return y, r64.squeeze(-1), dx, dw, x64


def _ulp_rtol(dtype):
    return {torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10, torch.float32: 2.0**-22}[dtype]


def _dw_excess(dw, ref):
    """Worst ratio of |dw - ref| to the budget 1e-4 + 1e-4 |ref| (<= 1 passes)."""
    return ((dw.double() - ref).abs() / (1e-4 + 1e-4 * ref.abs())).max().item()


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: "+".join(c) or "default")
@pytest.mark.parametrize(("x_dtype", "w_dtype"), [
    (torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32),
    (torch.float16, torch.float32), (torch.float32, torch.float32),
])
@pytest.mark.parametrize("residual", [False, True])
def test_reference_matches_fp64(contract, x_dtype, w_dtype, residual):
    rows, hidden, eps = 64, 896, 1e-6
    worst_dx, worst_dw = 0.0, 0.0
    for seed in SEEDS:
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(rows, hidden, generator=gen).to(x_dtype)
        u = torch.randn(rows, hidden, generator=gen).to(x_dtype) if residual else None
        w = (torch.rand(hidden, generator=gen) + 0.5).to(w_dtype)
        if contract.get("zero_centered_gamma"):
            w = (torch.randn(hidden, generator=gen) * 0.1).to(w_dtype)
        g = torch.randn(rows, hidden, generator=gen).to(x_dtype)
        gh = torch.randn(rows, hidden, generator=gen).to(x_dtype) if residual else None
        outs = rmsnorm_forward(x, w, eps, residual=u, **contract)
        y, rstd = outs[0], outs[1]
        normalised = outs[2] if residual else x
        dx, dw = rmsnorm_backward(g, normalised, w, rstd, g_residual=gh, **contract)
        y64, r64, dx64, dw64, _ = _fp64_model(x, w, g, eps, residual=u, g_residual=gh,
                                              rstd32=rstd, **contract)
        if residual:
            assert torch.equal(outs[2], (x.double() + u.double()).to(x_dtype))
        assert y.dtype == x_dtype and dx.dtype == x_dtype and dw.dtype == torch.float32
        torch.testing.assert_close(rstd.double(), r64, rtol=1e-6, atol=0)
        rtol = _ulp_rtol(x_dtype) * (2 if contract.get("cast_before_weight_mul") else 1)
        torch.testing.assert_close(y.double(), y64, rtol=rtol, atol=1e-6)
        worst_dx = max(worst_dx, ((dx.double() - dx64).abs()
                                  / (1e-2 + 1e-2 * dx64.abs())).max().item())
        worst_dw = max(worst_dw, _dw_excess(dw, dw64))
    assert worst_dx <= 1.0, f"dx outside atol=rtol=1e-2 (worst ratio {worst_dx:.3f})"
    assert worst_dw <= 1.0, f"dw outside 1e-4 + 1e-4|ref| (worst ratio {worst_dw:.3f})"


def test_dw_beats_plain_fp32_column_sum():
    """A column whose plain FP32 running sum loses the small terms; the reference keeps them."""
    rows, hidden = 2050, 64
    x = torch.ones(rows, hidden, dtype=torch.bfloat16)  # xhat == 1 exactly in every row
    w = torch.ones(hidden, dtype=torch.bfloat16)
    g = torch.full((rows, hidden), 0.75, dtype=torch.bfloat16)
    g[0] = 2.0**26
    g[-1] = -(2.0**26)
    _, rstd = rmsnorm_forward(x, w, 0.0)
    _, dw = rmsnorm_backward(g, x, w, rstd)
    exact = torch.full((hidden,), 0.75 * (rows - 2), dtype=torch.float64)
    terms = g.float() * (x.float() * rstd.reshape(-1, 1))
    plain = torch.zeros(hidden, dtype=torch.float32)
    for row in terms:  # the plain FP32 running column sum
        plain = plain + row
    assert _dw_excess(plain, exact) > 1.0, "the case must defeat a plain FP32 running sum"
    assert _dw_excess(dw, exact) <= 1.0
    assert torch.equal(dw.double(), exact)


def test_per_head_view_equals_contiguous_rows():
    """A strided [T, heads, D] view normalises each head row like its contiguous copy."""
    gen = torch.Generator().manual_seed(3)
    qkv = torch.randn(17, 3 * 4 * 128, generator=gen).to(torch.bfloat16)
    q = qkv[:, : 4 * 128].view(17, 4, 128)
    w = torch.rand(128, generator=gen).to(torch.bfloat16)
    y, rstd = rmsnorm_forward(q, w, 1e-6)
    y_ref, rstd_ref = rmsnorm_forward(q.contiguous().view(-1, 128), w, 1e-6)
    assert y.shape == q.shape and rstd.shape == (17, 4)
    assert torch.equal(y.view(-1, 128), y_ref) and torch.equal(rstd.view(-1), rstd_ref)
    g = torch.randn(17, 4, 128, generator=gen).to(torch.bfloat16)
    dx, dw = rmsnorm_backward(g, q, w, rstd)
    dx_ref, dw_ref = rmsnorm_backward(g.view(-1, 128), q.contiguous().view(-1, 128), w, rstd_ref)
    assert torch.equal(dx.view(-1, 128), dx_ref) and torch.equal(dw, dw_ref)


def test_nan_and_inf_propagate():
    x = torch.randn(4, 64).to(torch.bfloat16)
    x[1, 3] = float("nan")
    x[2, 5] = float("inf")
    w = torch.ones(64, dtype=torch.bfloat16)
    y, rstd = rmsnorm_forward(x, w)
    assert torch.isnan(y[1]).all() and torch.isnan(rstd[1])
    assert not torch.isfinite(y[2]).all()
    assert torch.isfinite(y[0]).all() and torch.isfinite(y[3]).all()
    g = torch.ones_like(x)
    dx, dw = rmsnorm_backward(g, x, w, rstd)
    assert torch.isnan(dx[1]).all() and torch.isnan(dw).all()
    assert torch.isfinite(dx[0]).all()


def test_zero_rows_return_empty_outputs():
    x = torch.empty(0, 5, 64, dtype=torch.bfloat16)
    w = torch.ones(64, dtype=torch.bfloat16)
    y, rstd, h_new = rmsnorm_forward(x, w, residual=torch.empty_like(x))
    assert y.shape == x.shape and rstd.shape == (0, 5) and h_new.shape == x.shape
    dw_buffer = torch.full((64,), 7.0)
    dx, dw = rmsnorm_backward(torch.empty_like(x), x, w, rstd, dw=dw_buffer)
    assert dx.shape == x.shape and dw is dw_buffer and torch.equal(dw, torch.zeros(64))


def test_out_buffers_receive_results():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 256, generator=gen).to(torch.bfloat16)
    w = torch.rand(256, generator=gen).to(torch.bfloat16)
    y_ref, rstd = rmsnorm_forward(x, w)
    out = torch.empty(256, 8, dtype=torch.bfloat16).t()  # non-contiguous: copied back
    y, _ = rmsnorm_forward(x, w, out=out)
    assert y is out and torch.equal(out, y_ref)
    g = torch.randn(8, 256, generator=gen).to(torch.bfloat16)
    dx_ref, dw_ref = rmsnorm_backward(g, x, w, rstd)
    dx_buf, dw_buf = torch.empty_like(x), torch.empty(256)
    dx, dw = rmsnorm_backward(g, x, w, rstd, dx=dx_buf, dw=dw_buf)
    assert dx is dx_buf and dw is dw_buf
    assert torch.equal(dx, dx_ref) and torch.equal(dw, dw_ref)
