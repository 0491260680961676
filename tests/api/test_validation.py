"""Every bad input raises a TypeError / ValueError naming the argument (CPU)."""

from __future__ import annotations

import pytest
import torch

from miles_ext_kernels.cake import (
    RMSNorm,
    rmsnorm,
    rmsnorm_backward,
    rmsnorm_forward,
    rmsnorm_workspace_bytes,
)

H = 64


def _x(rows=4, dtype=torch.bfloat16):
    return torch.randn(rows, H).to(dtype)


def _w(dtype=torch.bfloat16):
    return torch.ones(H, dtype=dtype)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"x": [1.0]}, TypeError, "x must be a torch.Tensor"),
    ({"x": torch.ones(4, H, dtype=torch.int32)}, TypeError, "x must have dtype"),
    ({"x": torch.ones(4, H, dtype=torch.float64)}, TypeError, "x must have dtype"),
    ({"x": torch.tensor(1.0, dtype=torch.bfloat16)}, ValueError, "x must have at least one"),
    ({"x": torch.ones(4, 0, dtype=torch.bfloat16)}, ValueError, "empty feature dimension"),
    ({"w": None}, TypeError, "w must be a torch.Tensor"),
    ({"w": torch.ones(H, dtype=torch.int8)}, TypeError, "w must have dtype"),
    ({"w": torch.ones(H + 1, dtype=torch.bfloat16)}, ValueError, r"w must have shape \[H\]"),
    ({"w": torch.ones(1, H, dtype=torch.bfloat16)}, ValueError, r"w must have shape \[H\]"),
    ({"w": torch.ones(H, dtype=torch.bfloat16, device="meta")}, ValueError, "w is on meta"),
    ({"eps": "1e-6"}, TypeError, "eps must be a real number"),
    ({"eps": True}, TypeError, "eps must be a real number"),
    ({"eps": -1.0}, ValueError, "eps must be finite and >= 0"),
    ({"eps": float("nan")}, ValueError, "eps must be finite"),
    ({"residual": torch.ones(4, H)}, TypeError, "residual must have the dtype of x"),
    ({"residual": torch.ones(5, H, dtype=torch.bfloat16)}, ValueError,
     "residual must have the shape of x"),
    ({"residual": 3}, TypeError, "residual must be a torch.Tensor"),
    ({"zero_centered_gamma": 1}, TypeError, "zero_centered_gamma must be a bool"),
    ({"cast_before_weight_mul": "yes"}, TypeError, "cast_before_weight_mul must be a bool"),
    ({"out": torch.empty(4, H)}, TypeError, "out must have dtype"),
    ({"out": torch.empty(3, H, dtype=torch.bfloat16)}, ValueError, "out must have shape"),
    ({"backend": "cuda"}, ValueError, "backend must be one of"),
    ({"strict": "yes"}, TypeError, "strict must be a bool"),
])
def test_forward_rejects(kwargs, error, match):
    args = {"x": _x(), "w": _w(), "eps": 1e-6}
    args.update(kwargs)
    x, w, eps = args.pop("x"), args.pop("w"), args.pop("eps")
    with pytest.raises(error, match=match):
        rmsnorm_forward(x, w, eps, **args)


def test_forward_refuses_out_aliasing_input():
    x = _x()
    with pytest.raises(ValueError, match="out overlaps the input x"):
        rmsnorm_forward(x, _w(), out=x)
    base = torch.randn(8, H).to(torch.bfloat16)
    with pytest.raises(ValueError, match="out overlaps the input residual"):
        rmsnorm_forward(_x(), _w(), residual=base[:4], out=base[2:6])
    y, _ = rmsnorm_forward(base[:4], _w(), out=base[4:8])  # adjacent, not overlapping
    assert y.data_ptr() == base[4:8].data_ptr()


def _bwd_args():
    x = _x()
    w = _w()
    _, rstd = rmsnorm_forward(x, w)
    return {"g": torch.randn_like(x), "x": x, "w": w, "rstd": rstd}


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"g": torch.ones(4, H)}, TypeError, "g must have the dtype of x"),
    ({"g": torch.ones(4, H + 8, dtype=torch.bfloat16)}, ValueError, "g must have the shape"),
    ({"g": "grad"}, TypeError, "g must be a torch.Tensor"),
    ({"rstd": torch.ones(4, dtype=torch.bfloat16)}, TypeError, "rstd must have dtype float32"),
    ({"rstd": torch.ones(5)}, ValueError, "rstd must hold one value per row"),
    ({"rstd": None}, TypeError, "rstd must be a torch.Tensor"),
    ({"g_residual": torch.ones(4, 8, dtype=torch.bfloat16)}, ValueError,
     "g_residual must have the shape"),
    ({"deterministic": 0}, TypeError, "deterministic must be a bool"),
    ({"grid": 0}, ValueError, "grid must be >= 1"),
    ({"grid": 1.5}, TypeError, "grid must be an int"),
    ({"dx": torch.empty(4, H)}, TypeError, "dx must have dtype"),
    ({"dw": torch.empty(H, dtype=torch.bfloat16)}, TypeError, "dw must have dtype"),
    ({"dw": torch.empty(H + 1)}, ValueError, "dw must have shape"),
    ({"workspace": [0]}, TypeError, "workspace must be a torch.Tensor"),
    # checked on every backend (here the reference one), not only where a program uses it
    ({"workspace": torch.zeros(16)}, ValueError, "workspace must be a 1-D uint8 tensor"),
    ({"workspace": torch.zeros(4, 4, dtype=torch.uint8)}, ValueError,
     "workspace must be a 1-D uint8 tensor"),
    ({"workspace": torch.zeros(32, dtype=torch.uint8)[::2]}, ValueError,
     "workspace must be contiguous"),
    ({"workspace": torch.zeros(16, dtype=torch.uint8, device="meta")}, ValueError,
     "workspace is on meta"),
])
def test_backward_rejects(kwargs, error, match):
    args = _bwd_args()
    args.update(kwargs)
    g, x, w, rstd = (args.pop(k) for k in ("g", "x", "w", "rstd"))
    with pytest.raises(error, match=match):
        rmsnorm_backward(g, x, w, rstd, **args)


def test_backward_refuses_aliasing_outputs():
    args = _bwd_args()
    with pytest.raises(ValueError, match="dx overlaps the input g"):
        rmsnorm_backward(args["g"], args["x"], args["w"], args["rstd"], dx=args["g"])
    with pytest.raises(ValueError, match="dx overlaps the input x"):
        rmsnorm_backward(args["g"], args["x"], args["w"], args["rstd"], dx=args["x"])
    with pytest.raises(ValueError, match="dw overlaps the input rstd"):
        big = torch.zeros(2 * H)
        rstd = big[:4]
        rmsnorm_backward(args["g"], args["x"], args["w"], rstd, dw=big[:H])
    fp32_w = torch.ones(H)
    with pytest.raises(ValueError, match="dw overlaps the input w"):
        rmsnorm_backward(args["g"], args["x"], fp32_w, args["rstd"], dw=fp32_w)


def test_rmsnorm_and_module_reject_bad_options():
    x, w = _x(), _w()
    with pytest.raises(ValueError, match="weight_grad must be one of"):
        rmsnorm(x, w, weight_grad="bf16")
    with pytest.raises(TypeError, match="deterministic must be a bool"):
        rmsnorm(x, w, deterministic=None)
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        rmsnorm(x.tolist(), w)
    with pytest.raises(ValueError, match="weight_grad='fp32' needs an FP32 w"):
        rmsnorm(x, w.clone().requires_grad_(), weight_grad="fp32")
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        RMSNorm(0)
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        RMSNorm(H, eps=-1)
    with pytest.raises(ValueError, match="backend must be one of"):
        RMSNorm(H, backend="triton")
    with pytest.raises(ValueError, match="hidden must be a positive int"):
        rmsnorm_workspace_bytes(0, "cpu")


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"zero_centered_gamma": "false"}, TypeError, "zero_centered_gamma must be a bool"),
    ({"cast_before_weight_mul": 1}, TypeError, "cast_before_weight_mul must be a bool"),
    ({"deterministic": "no"}, TypeError, "deterministic must be a bool"),
    ({"eps": float("nan")}, ValueError, "eps must be finite"),
    ({"eps": float("inf")}, ValueError, "eps must be finite"),
    ({"eps": "x"}, TypeError, "eps must be a real number"),
    ({"eps": True}, TypeError, "eps must be a real number"),
    ({"strict": "x"}, TypeError, "strict must be a bool or None"),
    ({"weight_grad": "bf16"}, ValueError, "weight_grad must be one of"),
    ({"weight_grad": ["param"]}, ValueError, "weight_grad must be one of"),
    ({"backend": "triton"}, ValueError, "backend must be one of"),
])
def test_module_refuses_at_construction_what_rmsnorm_refuses(kwargs, error, match):
    """RMSNorm(...) checks every option up front, with the error of the functional API."""
    with pytest.raises(error, match=match) as module_error:
        RMSNorm(H, **kwargs)
    with pytest.raises(error, match=match) as functional_error:
        rmsnorm(_x(), _w(), **kwargs)
    assert str(module_error.value) == str(functional_error.value)


@pytest.mark.parametrize(("dtype", "match"), [
    (torch.int32, "dtype must be one of bfloat16, float16, float32"),
    (torch.float64, "dtype must be one of bfloat16, float16, float32"),
    ("bf16", "dtype must be a torch.dtype or None"),
])
def test_module_refuses_a_weight_dtype_rmsnorm_does_not_take(dtype, match):
    with pytest.raises(TypeError, match=match):
        RMSNorm(H, dtype=dtype)


def test_module_flags_are_kept_as_given():
    norm = RMSNorm(H, zero_centered_gamma=False, deterministic=False, eps=0)
    assert norm.zero_centered_gamma is False and norm.deterministic is False
    assert norm.eps == 0.0 and isinstance(norm.eps, float)
    assert torch.equal(norm.weight, torch.ones(H))


def test_environment_values_are_checked(monkeypatch):
    monkeypatch.setenv("MILES_EXT_KERNELS_RMSNORM_BACKEND", "fastest")
    with pytest.raises(ValueError, match="MILES_EXT_KERNELS_RMSNORM_BACKEND"):
        rmsnorm_forward(_x(), _w())
    monkeypatch.delenv("MILES_EXT_KERNELS_RMSNORM_BACKEND")
    monkeypatch.setenv("MILES_EXT_KERNELS_STRICT", "maybe")
    with pytest.raises(ValueError, match="MILES_EXT_KERNELS_STRICT"):
        rmsnorm_forward(_x(), _w())


def test_non_unit_feature_stride_is_copied_once():
    base = torch.randn(H, 6).to(torch.bfloat16)
    x = base.t()  # [6, H] with stride(-1) == 6
    y, rstd = rmsnorm_forward(x, _w())
    y_ref, rstd_ref = rmsnorm_forward(x.contiguous(), _w())
    assert torch.equal(y, y_ref) and torch.equal(rstd, rstd_ref)


def test_a_well_formed_workspace_of_any_size_is_ignored_by_the_reference_backend():
    args = _bwd_args()
    expected = rmsnorm_backward(*(args[k] for k in ("g", "x", "w", "rstd")))
    got = rmsnorm_backward(*(args[k] for k in ("g", "x", "w", "rstd")),
                           workspace=torch.zeros(3, dtype=torch.uint8))
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))


@pytest.mark.parametrize("spelling", ["REFERENCE", " Reference ", "reference"])
def test_backend_spellings_match_the_environment_variable(spelling, monkeypatch):
    x = _x()
    y, _ = rmsnorm_forward(x, _w(), backend=spelling)
    monkeypatch.setenv("MILES_EXT_KERNELS_RMSNORM_BACKEND", spelling)
    env_y, _ = rmsnorm_forward(x, _w())
    assert torch.equal(y, env_y)
    assert torch.equal(rmsnorm(x, _w(), backend=spelling), y)
    assert RMSNorm(H, backend=spelling).backend is not None
    with pytest.raises(ValueError, match="backend must be one of"):
        rmsnorm_forward(_x(), _w(), backend="ref erence")
