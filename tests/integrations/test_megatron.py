"""MegatronRMSNorm against a minimal Megatron-style config object (no Megatron installed)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from miles_ext_kernels.cake import rmsnorm
from miles_ext_kernels.integrations import MegatronRMSNorm


@dataclass
class MiniTransformerConfig:
    """The TransformerConfig fields MegatronRMSNorm reads, with Megatron's defaults."""

    normalization: str = "RMSNorm"
    layernorm_epsilon: float = 1e-5
    layernorm_zero_centered_gamma: bool = False
    sequence_parallel: bool = False
    params_dtype: torch.dtype = torch.float32
    gradient_accumulation_fusion: bool = False
    use_cpu_initialization: bool = True


def _config(**fields) -> MiniTransformerConfig:
    return MiniTransformerConfig(**fields)


def _fp64_reference(x, w, eps, zero_centered_gamma):
    x64 = x.double()
    w64 = w.double() + 1.0 if zero_centered_gamma else w.double()
    return x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + eps) * w64


def _inputs(shape, dtype, seed):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=generator) * 2).to(dtype)


def _randomise(norm: MegatronRMSNorm, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        norm.weight.add_(torch.randn(norm.weight.shape, generator=generator) * 0.3)


# ----------------------------------------------------------------------------- construction


def test_constructor_follows_the_config():
    config = _config(layernorm_epsilon=3e-6, sequence_parallel=True, params_dtype=torch.bfloat16)
    norm = MegatronRMSNorm(config, 96)
    assert norm.eps == 3e-6
    assert norm.weight.shape == (96,)
    assert norm.weight.dtype == torch.bfloat16
    assert norm.weight.device.type == "cpu"
    assert norm.weight.sequence_parallel is True
    assert torch.equal(norm.weight, torch.ones(96, dtype=torch.bfloat16))
    assert list(norm.state_dict()) == ["weight"]


def test_te_norm_keywords_and_explicit_eps():
    """Megatron's build_module passes config=, hidden_size=, eps= by keyword."""
    norm = MegatronRMSNorm(config=_config(layernorm_epsilon=1e-5), hidden_size=32, eps=1e-6)
    assert norm.eps == 1e-6
    assert norm.weight.sequence_parallel is False


def test_zero_centered_gamma_initialises_to_zero_and_normalises_plainly():
    norm = MegatronRMSNorm(_config(layernorm_zero_centered_gamma=True), 64)
    assert torch.equal(norm.weight, torch.zeros(64))
    x = _inputs((5, 64), torch.float32, 0)
    with torch.no_grad():
        y = norm(x)
    expected = _fp64_reference(x, torch.ones(64), norm.eps, zero_centered_gamma=False)
    torch.testing.assert_close(y.double(), expected, atol=1e-6, rtol=1e-6)


def test_simple_namespace_config_with_missing_optional_fields():
    norm = MegatronRMSNorm(SimpleNamespace(normalization="RMSNorm", use_cpu_initialization=True), 8)
    assert norm.eps == 1e-5
    assert norm.weight.dtype == torch.float32
    assert norm.zero_centered_gamma is False
    assert norm.weight.sequence_parallel is False


def test_meta_device_initialisation():
    config = _config(use_cpu_initialization=False)
    config.init_model_with_meta_device = True
    norm = MegatronRMSNorm(config, 16)
    assert norm.weight.device.type == "meta"


@pytest.mark.parametrize(
    ("config", "hidden", "eps", "error", "match"),
    [
        (_config(normalization="LayerNorm"), 8, None, ValueError, "config.normalization"),
        (_config(params_dtype=torch.float64), 8, None, ValueError, "config.params_dtype"),
        (_config(params_dtype="bf16"), 8, None, ValueError, "config.params_dtype"),
        (_config(sequence_parallel=1), 8, None, TypeError, "config.sequence_parallel"),
        (_config(layernorm_epsilon=-1.0), 8, None, ValueError, "config.layernorm_epsilon"),
        (_config(), 8, float("nan"), ValueError, "eps"),
        (_config(), 8, "1e-5", TypeError, "eps"),
        (_config(), 0, None, ValueError, "hidden_size"),
        (_config(), 8.0, None, ValueError, "hidden_size"),
        (None, 8, None, TypeError, "config"),
    ],
)
def test_bad_configuration_is_refused(config, hidden, eps, error, match):
    with pytest.raises(error, match=match):
        MegatronRMSNorm(config, hidden, eps)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"backend": "no-such-backend"}, ValueError, "backend"),
        ({"strict": "yes"}, TypeError, "strict"),
        ({"deterministic": 1}, TypeError, "deterministic"),
    ],
)
def test_bad_options_are_refused(options, error, match):
    with pytest.raises(error, match=match):
        MegatronRMSNorm(_config(), 8, **options)


# ----------------------------------------------------------------------------- numerics


@pytest.mark.parametrize("zero_centered_gamma", [False, True])
@pytest.mark.parametrize("params_dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_forward_and_backward_match_rmsnorm_and_fp64(zero_centered_gamma, params_dtype):
    config = _config(layernorm_zero_centered_gamma=zero_centered_gamma, params_dtype=params_dtype)
    norm = MegatronRMSNorm(config, 128)
    _randomise(norm, 1)
    x = _inputs((6, 3, 128), torch.bfloat16, 2).requires_grad_()  # [s, b, h]
    y = norm(x)
    assert y.shape == x.shape and y.dtype == torch.bfloat16
    expected = rmsnorm(
        x.detach(), norm.weight.detach(), norm.eps, zero_centered_gamma=zero_centered_gamma
    )
    assert torch.equal(y.detach(), expected)

    x64 = x.detach().double().requires_grad_()
    w64 = norm.weight.detach().double().requires_grad_()
    y64 = _fp64_reference(x64, w64, norm.eps, zero_centered_gamma)
    torch.testing.assert_close(y.double(), y64.detach(), atol=1e-2, rtol=1e-2)
    g = _inputs(x.shape, torch.bfloat16, 3)
    y.backward(g)
    dx64, dw64 = torch.autograd.grad(y64, (x64, w64), g.double())
    torch.testing.assert_close(x.grad.double(), dx64, atol=1e-2, rtol=1e-2)
    assert norm.weight.grad.dtype == params_dtype
    if params_dtype == torch.float32:
        assert torch.all((norm.weight.grad.double() - dw64).abs() <= 1e-4 + 1e-4 * dw64.abs())
    else:
        torch.testing.assert_close(norm.weight.grad.double(), dw64, atol=1e-2, rtol=1e-2)


def test_per_head_qk_norm_shape():
    """q_layernorm / k_layernorm receive [s, b, heads, head_dim]."""
    norm = MegatronRMSNorm(_config(params_dtype=torch.bfloat16), 16)
    _randomise(norm, 4)
    x = _inputs((3, 2, 4, 16), torch.bfloat16, 5)
    with torch.no_grad():
        y = norm(x)
    expected = _fp64_reference(x, norm.weight, norm.eps, False)
    assert y.shape == x.shape
    torch.testing.assert_close(y.double(), expected, atol=1e-2, rtol=1e-2)


def test_fused_residual_returns_the_new_residual():
    norm = MegatronRMSNorm(_config(params_dtype=torch.bfloat16), 64)
    _randomise(norm, 6)
    x = _inputs((4, 64), torch.bfloat16, 7)
    residual = _inputs((4, 64), torch.bfloat16, 8)
    with torch.no_grad():
        y, h_new = norm(x, residual)
        plain = norm(h_new)
    assert torch.equal(h_new, (x.float() + residual.float()).to(torch.bfloat16))
    assert torch.equal(y, plain)


# ----------------------------------------------------------------------------- main_grad


def test_gradient_accumulation_fusion_accumulates_fp32_main_grad():
    config = _config(gradient_accumulation_fusion=True, params_dtype=torch.bfloat16)
    norm = MegatronRMSNorm(config, 64)
    _randomise(norm, 9)
    # What Megatron's DistributedDataParallel attaches to every parameter.
    norm.weight.main_grad = torch.zeros(64, dtype=torch.float32)
    norm.weight.grad_added_to_main_grad = False
    expected = torch.zeros(64, dtype=torch.float64)
    for step in range(2):
        x = _inputs((8, 64), torch.bfloat16, 10 + step)
        g = _inputs((8, 64), torch.bfloat16, 20 + step)
        norm(x).backward(g)
        w64 = norm.weight.detach().double().requires_grad_()
        (dw64,) = torch.autograd.grad(_fp64_reference(x, w64, norm.eps, False), w64, g.double())
        expected += dw64
    assert norm.weight.main_grad.dtype == torch.float32
    assert torch.all(
        (norm.weight.main_grad.double() - expected).abs() <= 2e-4 + 2e-4 * expected.abs()
    )
    assert norm.weight.grad_added_to_main_grad is True
    # A zero gradient still arrives so DDP's grad hooks fire (overlap_grad_reduce asserts it).
    assert norm.weight.grad is not None
    assert torch.count_nonzero(norm.weight.grad) == 0


def test_gradient_accumulation_fusion_needs_main_grad():
    norm = MegatronRMSNorm(_config(gradient_accumulation_fusion=True), 16)
    with pytest.raises(RuntimeError, match="main_grad"):
        norm(_inputs((2, 16), torch.float32, 0))
    with torch.no_grad():
        assert norm(_inputs((2, 16), torch.float32, 0)).shape == (2, 16)


@pytest.mark.parametrize(
    ("main_grad", "error", "match"),
    [
        (torch.zeros(32), ValueError, "main_grad must have the shape of w"),
        ("buffer", TypeError, "main_grad must be a torch.Tensor"),
    ],
)
def test_gradient_accumulation_fusion_refuses_a_bad_main_grad_in_the_forward(
    main_grad, error, match
):
    norm = MegatronRMSNorm(_config(gradient_accumulation_fusion=True), 16)
    norm.weight.main_grad = main_grad
    norm.weight.grad_added_to_main_grad = False
    with pytest.raises(error, match=match):
        norm(_inputs((2, 16), torch.float32, 0))
    assert norm.weight.main_grad is main_grad
    assert norm.weight.grad_added_to_main_grad is False and norm.weight.grad is None


def test_gradient_accumulation_fusion_checks_a_main_grad_replaced_before_the_backward():
    norm = MegatronRMSNorm(_config(gradient_accumulation_fusion=True), 16)
    norm.weight.main_grad = torch.zeros(16)
    norm.weight.grad_added_to_main_grad = False
    y = norm(_inputs((2, 16), torch.float32, 0))
    norm.weight.main_grad = torch.zeros(8)
    with pytest.raises(ValueError, match="main_grad must have the shape of w"):
        y.backward(torch.ones_like(y))
    assert torch.equal(norm.weight.main_grad, torch.zeros(8))
    assert norm.weight.grad_added_to_main_grad is False


# ----------------------------------------------------------------------------- import hygiene


def test_integrations_import_neither_megatron_nor_transformers():
    code = (
        "import sys, miles_ext_kernels.integrations as m\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in "
        "('megatron', 'transformer_engine', 'transformers'))\n"
        "assert not bad, bad\n"
        "print(m.MegatronRMSNorm.__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "MegatronRMSNorm"
