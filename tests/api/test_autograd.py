"""Autograd, custom-op registration, nn.Module, checkpointing, autocast and main_grad (CPU)."""

from __future__ import annotations

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from miles_ext_kernels.cake import RMSNorm, rmsnorm, rmsnorm_backward, rmsnorm_forward


def _inputs(rows=24, hidden=256, dtype=torch.bfloat16, w_dtype=torch.bfloat16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, hidden, generator=gen).to(dtype).requires_grad_()
    w = (torch.rand(hidden, generator=gen) + 0.5).to(w_dtype).requires_grad_()
    return x, w, gen


def test_custom_ops_are_registered_with_schemas():
    ops = torch.ops.miles_ext_kernels
    for name in ("rmsnorm_fwd", "rmsnorm_residual_fwd", "rmsnorm_bwd"):
        assert hasattr(ops, name), name
    schema = str(ops.rmsnorm_bwd.default._schema)
    assert "Tensor? g_residual" in schema and "str? backend" in schema


@pytest.mark.parametrize("residual", [False, True])
def test_opcheck(residual):
    """torch.library.opcheck: schema, fake impl, autograd registration, AOT dispatch."""
    x, w, gen = _inputs(rows=6, hidden=64)
    if residual:
        u = torch.randn(6, 64, generator=gen).to(torch.bfloat16).requires_grad_()
        torch.library.opcheck(torch.ops.miles_ext_kernels.rmsnorm_residual_fwd,
                              (x, u, w, 1e-6, False, False, True, None, None))
    else:
        torch.library.opcheck(torch.ops.miles_ext_kernels.rmsnorm_fwd,
                              (x, w, 1e-6, False, True, True, None, None))
    _, rstd = rmsnorm_forward(x.detach(), w.detach())
    g = torch.randn(6, 64, generator=gen).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.miles_ext_kernels.rmsnorm_bwd,
                          (g, x.detach(), w.detach(), rstd, None, True, False, False, None, None))


@pytest.mark.parametrize("contract", [{}, {"zero_centered_gamma": True},
                                      {"cast_before_weight_mul": True}])
@pytest.mark.parametrize("w_dtype", [torch.bfloat16, torch.float32])
def test_gradients_match_fp64_autograd(contract, w_dtype):
    x, w, gen = _inputs(w_dtype=w_dtype)
    if contract.get("zero_centered_gamma"):
        w = (torch.randn(256, generator=gen) * 0.1).to(w_dtype).requires_grad_()
    y = rmsnorm(x, w, **contract)
    g = torch.randn(y.shape, generator=gen).to(y.dtype)
    y.backward(g)
    x64 = x.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_()
    w_eff = 1 + w64 if contract.get("zero_centered_gamma") else w64
    xhat = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6)
    if contract.get("cast_before_weight_mul"):
        # The contract's rounded xhat multiplies w (straight-through for dx).
        _, rstd = rmsnorm_forward(x.detach(), w.detach(), **contract)
        rounded = (x.detach().float() * rstd.unsqueeze(-1)).to(x.dtype).double()
        xhat = xhat + (rounded - xhat).detach()
    (xhat * w_eff).backward(g.double())
    assert w.grad.dtype == w_dtype and x.grad.dtype == x.dtype
    torch.testing.assert_close(x.grad.double(), x64.grad, atol=1e-2, rtol=1e-2)
    # dw is rounded once to the weight's dtype.
    tol = 2.0**-8 if w_dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(w.grad.double(), w64.grad, atol=1e-5, rtol=tol)


def test_autograd_equals_functional_backward_bitwise():
    x, w, gen = _inputs()
    u = torch.randn(24, 256, generator=gen).to(torch.bfloat16).requires_grad_()
    y, h_new = rmsnorm(x, w, residual=u)
    g = torch.randn(24, 256, generator=gen).to(torch.bfloat16)
    gh = torch.randn(24, 256, generator=gen).to(torch.bfloat16)
    torch.autograd.backward([y, h_new], [g, gh])
    y_ref, rstd, h_ref = rmsnorm_forward(x.detach(), w.detach(), residual=u.detach())
    dx, dw = rmsnorm_backward(g, h_ref, w.detach(), rstd, g_residual=gh)
    assert torch.equal(y, y_ref) and torch.equal(h_new, h_ref)
    assert torch.equal(x.grad, dx) and torch.equal(u.grad, dx)
    assert x.grad.data_ptr() != u.grad.data_ptr()
    assert torch.equal(w.grad, dw.to(w.dtype))


def test_fp32_weight_grad_mode_keeps_fp32():
    x, w, gen = _inputs(w_dtype=torch.float32)
    rmsnorm(x, w, weight_grad="fp32").float().sum().backward()
    _, rstd = rmsnorm_forward(x.detach(), w.detach())
    _, dw = rmsnorm_backward(torch.ones(24, 256, dtype=torch.bfloat16), x.detach(),
                             w.detach(), rstd)
    assert w.grad.dtype == torch.float32 and torch.equal(w.grad, dw)


def test_main_grad_accumulates_in_fp32():
    x, w, gen = _inputs()
    g = torch.randn(24, 256, generator=gen).to(torch.bfloat16)
    _, rstd = rmsnorm_forward(x.detach(), w.detach())
    _, dw = rmsnorm_backward(g, x.detach(), w.detach(), rstd)
    rmsnorm(x, w, weight_grad="main_grad").backward(g)
    assert w.grad is None and w.main_grad.dtype == torch.float32
    assert torch.equal(w.main_grad, dw)
    rmsnorm(x, w, weight_grad="main_grad").backward(g)
    assert torch.equal(w.main_grad, dw + dw)
    # Megatron-style parameter: the flag is set and a zero grad keeps the grad hooks firing.
    w2 = w.detach().clone().requires_grad_()
    w2.main_grad = torch.full((256,), 1.0)
    w2.grad_added_to_main_grad = False
    rmsnorm(x, w2, weight_grad="main_grad").backward(g)
    assert w2.grad_added_to_main_grad is True and torch.equal(w2.grad, torch.zeros_like(w2))
    assert torch.equal(w2.main_grad, dw + 1.0)


@pytest.mark.parametrize(("main_grad", "error", "match"), [
    (torch.zeros(32), ValueError, r"w.main_grad must have the shape of w \(256,\); got \(32,\)"),
    ("buffer", TypeError, "w.main_grad must be a torch.Tensor"),
    (torch.zeros(256, dtype=torch.int32), TypeError, "w.main_grad must have dtype"),
    (torch.zeros(256, device="meta"), ValueError, "w.main_grad is on meta but w is on cpu"),
])
def test_bad_main_grad_is_refused_in_the_forward(main_grad, error, match):
    x, w, _ = _inputs()
    w.main_grad = main_grad
    with pytest.raises(error, match=match):
        rmsnorm(x, w, weight_grad="main_grad")
    assert w.main_grad is main_grad and w.grad is None
    with torch.no_grad():  # no backward can follow: main_grad is not used, so not checked
        rmsnorm(x, w, weight_grad="main_grad")


def test_main_grad_replaced_after_the_forward_is_checked_in_the_backward():
    x, w, gen = _inputs()
    g = torch.randn(24, 256, generator=gen).to(torch.bfloat16)
    w.main_grad = torch.zeros(256)
    y = rmsnorm(x, w, weight_grad="main_grad")
    bad = torch.ones(32)
    w.main_grad = bad
    with pytest.raises(ValueError, match="w.main_grad must have the shape of w"):
        y.backward(g)
    assert torch.equal(bad, torch.ones(32)) and x.grad is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_main_grad_attached_after_the_forward_receives_dw(dtype):
    """Megatron allocates main_grad buffers lazily: one attached before the backward is used."""
    x, w, gen = _inputs()
    g = torch.randn(24, 256, generator=gen).to(torch.bfloat16)
    _, rstd = rmsnorm_forward(x.detach(), w.detach())
    _, dw = rmsnorm_backward(g, x.detach(), w.detach(), rstd)
    y = rmsnorm(x, w, weight_grad="main_grad")
    buffer = torch.ones(256, dtype=dtype)
    w.main_grad = buffer
    y.backward(g)
    assert w.main_grad is buffer and torch.equal(buffer, (dw + 1.0).to(dtype))


def test_main_grad_of_a_frozen_weight_is_left_alone():
    x, w, gen = _inputs()
    w.requires_grad_(False)
    w.main_grad = "not a tensor"  # never read: no gradient of w is wanted
    rmsnorm(x, w, weight_grad="main_grad").float().sum().backward()
    assert w.main_grad == "not a tensor" and x.grad is not None
    del w.main_grad
    rmsnorm(x, w, weight_grad="main_grad").float().sum().backward()
    assert not hasattr(w, "main_grad")


def test_checkpoint_recompute_gives_identical_bits():
    x, w, gen = _inputs()
    u = torch.randn(24, 256, generator=gen).to(torch.bfloat16).requires_grad_()
    lin = torch.nn.Linear(256, 256, dtype=torch.bfloat16)

    def block(a, b):
        y, h = rmsnorm(lin(a), w, residual=b)
        return y * 2 + h

    grads = []
    for use_checkpoint in (False, True):
        for t in (x, u, w, lin.weight):
            t.grad = None
        out = checkpoint(block, x, u, use_reentrant=False) if use_checkpoint else block(x, u)
        out.float().square().sum().backward()
        grads.append([t.grad.clone() for t in (x, u, w, lin.weight)] + [out.detach()])
    for plain, recomputed in zip(*grads, strict=True):
        assert torch.equal(plain, recomputed)


def test_autocast_casts_fp32_activations_only():
    x32 = torch.randn(8, 128, requires_grad=True)
    w = torch.ones(128, dtype=torch.float32, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = rmsnorm(x32, w)
    assert y.dtype == torch.bfloat16
    assert torch.equal(y, rmsnorm_forward(x32.detach().to(torch.bfloat16), w.detach())[0])
    y.float().sum().backward()
    assert x32.grad.dtype == torch.float32 and w.grad.dtype == torch.float32
    y_plain = rmsnorm(x32.detach(), w.detach())
    assert y_plain.dtype == torch.float32  # no autocast: FP32 stays FP32 (reference)


def test_zero_rows_and_nan_through_autograd():
    x = torch.empty(0, 64, dtype=torch.bfloat16, requires_grad=True)
    w = torch.ones(64, dtype=torch.bfloat16, requires_grad=True)
    y = rmsnorm(x, w)
    y.float().sum().backward()
    assert y.shape == (0, 64) and torch.equal(w.grad, torch.zeros_like(w))
    xn = torch.randn(3, 64).to(torch.bfloat16)
    xn[1, 0] = float("nan")
    xn.requires_grad_()
    w.grad = None
    rmsnorm(xn, w).float().sum().backward()
    assert torch.isnan(xn.grad[1]).all() and torch.isfinite(xn.grad[0]).all()
    assert torch.isnan(w.grad).all()


def test_module_init_forward_and_repr():
    norm = RMSNorm(128, eps=1e-5, dtype=torch.bfloat16)
    assert torch.equal(norm.weight, torch.ones(128, dtype=torch.bfloat16))
    zc = RMSNorm(128, zero_centered_gamma=True, weight_grad="main_grad", dtype=torch.float32)
    assert torch.equal(zc.weight, torch.zeros(128)) and zc.weight.dtype == torch.float32
    assert "zero_centered_gamma=True" in repr(zc) and "weight_grad='main_grad'" in repr(zc)
    assert "128, eps=1e-05" in repr(norm)
    x = torch.randn(2, 5, 128).to(torch.bfloat16)
    assert torch.equal(norm(x), rmsnorm(x, norm.weight.detach(), 1e-5))
    y, h = norm(x, residual=x)
    assert torch.equal(h, (x.float() * 2).to(torch.bfloat16)) and y.shape == x.shape
    assert list(norm.state_dict()) == ["weight"]


@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("residual", [False, True])
def test_meta_tensors_give_meta_outputs(residual, x_dtype):
    """Shape inference on the meta device: no autocast error, shapes and dtypes as on CPU."""
    x = torch.empty(6, 64, dtype=x_dtype, device="meta", requires_grad=True)
    w = torch.empty(64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    u = torch.empty(6, 64, dtype=x_dtype, device="meta") if residual else None
    out = rmsnorm(x, w, residual=u)
    y = out[0] if residual else out
    assert y.device.type == "meta" and y.shape == x.shape and y.dtype == x.dtype
    y.sum().backward()
    assert x.grad.device.type == "meta" and x.grad.shape == x.shape
    assert w.grad.device.type == "meta" and w.grad.shape == w.shape
    y2, rstd = rmsnorm_forward(x.detach(), w.detach())
    assert y2.device.type == "meta" and rstd.shape == (6,)
