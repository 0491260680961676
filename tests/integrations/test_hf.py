"""The Hugging Face RMSNorm patch on tiny randomly initialised transformers models (CPU)."""

from __future__ import annotations

import copy
import importlib
import inspect
import logging
import re
from pathlib import Path

import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")

from miles_ext_kernels.cake import RMSNormUnsupportedError, rmsnorm  # noqa: E402
from miles_ext_kernels.integrations import (  # noqa: E402
    KNOWN_CLASSES,
    PatchHandle,
    patch_rmsnorm,
    patched_modules,
    unpatch_rmsnorm,
)

SMALL = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=128,
    max_position_embeddings=64,
)
QWEN3_NEXT = dict(
    head_dim=16,
    linear_num_value_heads=4,
    linear_num_key_heads=2,
    linear_key_head_dim=16,
    linear_value_head_dim=16,
    num_experts=4,
    num_experts_per_tok=2,
    moe_intermediate_size=32,
    shared_expert_intermediate_size=32,
    layer_types=["linear_attention", "full_attention"],
)
# (config class, extra config fields, the RMSNorm class the model uses)
MODELS = {
    "llama": ("LlamaConfig", {}, "LlamaRMSNorm"),
    "qwen2": ("Qwen2Config", {}, "Qwen2RMSNorm"),
    "qwen3": ("Qwen3Config", {"head_dim": 16}, "Qwen3RMSNorm"),
    "mistral": ("MistralConfig", {}, "MistralRMSNorm"),
    "gemma": ("GemmaConfig", {"head_dim": 16}, "GemmaRMSNorm"),
    "gemma3": ("Gemma3TextConfig", {"head_dim": 16}, "Gemma3RMSNorm"),
    "qwen3_next": ("Qwen3NextConfig", QWEN3_NEXT, "Qwen3NextRMSNorm"),
    "olmo2": ("Olmo2Config", {}, "Olmo2RMSNorm"),
}


# ----------------------------------------------------------------------------- helpers


def _contract_formula(x: torch.Tensor, w: torch.Tensor, eps: float, contract: str) -> torch.Tensor:
    """Each contract written the way transformers writes it (rsqrt of the FP32 mean square)."""
    x32 = x.float()
    normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    if contract == "cast_before_weight_mul":
        return w * normed.to(x.dtype)
    if contract == "zero_centered_gamma":
        return (normed * (1.0 + w.float())).to(x.dtype)
    assert contract == "default"
    return (normed * w.float()).to(x.dtype)


@pytest.fixture(scope="session")
def norm_classes() -> dict[str, type]:
    """The installed transformers' classes named in KNOWN_CLASSES, found by reading the source."""
    root = Path(transformers.__file__).parent / "models"
    pattern = re.compile(r"^class (\w+)\(", re.MULTILINE)
    found: dict[str, type] = {}
    for path in sorted(root.glob("*/modeling_*.py")):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            if name in KNOWN_CLASSES and name not in found:
                module = importlib.import_module(
                    f"transformers.models.{path.parent.name}.{path.stem}"
                )
                found[name] = getattr(module, name)
    return found


def _norm_eps(module: nn.Module) -> float:
    return getattr(module, "variance_epsilon", getattr(module, "eps", None))


def _randomise_norm_weights(model: nn.Module, seed: int) -> None:
    """Random RMSNorm weights (Gemma-style models initialise them to zero)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if type(module).__name__.endswith("RMSNorm"):
                noise = torch.randn(module.weight.shape, generator=generator) * 0.3
                module.weight.copy_(module.weight.float() + noise)


def _build_model(key: str, dtype: torch.dtype, seed: int = 0) -> nn.Module:
    config_name, extra, _ = MODELS[key]
    config_class = getattr(transformers, config_name, None)
    if config_class is None:
        pytest.skip(f"transformers {transformers.__version__} has no {config_name}")
    config = config_class(**SMALL, **extra)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config)
    _randomise_norm_weights(model, seed)
    return model.to(dtype).eval()


def _logits_and_grads(model: nn.Module, ids: torch.Tensor) -> tuple[torch.Tensor, dict]:
    model.zero_grad(set_to_none=True)
    logits = model(ids).logits
    logits.float().square().mean().backward()
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    return logits.detach(), grads


def _assert_close_scaled(actual: torch.Tensor, expected: torch.Tensor, rel: float, what: str):
    """|actual - expected| <= rel * max|expected| elementwise (a scale-aware budget)."""
    scale = expected.float().abs().max().clamp_min(1e-30)
    err = (actual.float() - expected.float()).abs().max()
    assert err <= rel * scale, f"{what}: max error {err:.3e} > {rel} * {scale:.3e}"


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------------------- the table


@pytest.mark.parametrize("class_name", sorted(KNOWN_CLASSES))
def test_known_contract_matches_installed_transformers(norm_classes, class_name):
    """Each built-in class computes exactly the formula of the contract we file it under."""
    cls = norm_classes.get(class_name)
    if cls is None:
        pytest.skip(f"transformers {transformers.__version__} has no {class_name}")
    contract = KNOWN_CLASSES[class_name]
    module = cls(64, eps=1e-5)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        module.weight.copy_(torch.randn(64, generator=generator) * 0.5)
    for dtype in (torch.bfloat16, torch.float32):
        norm = copy.deepcopy(module).to(dtype)
        x = (torch.randn(16, 64, generator=generator) * 3).to(dtype)
        with torch.no_grad():
            original = norm(x)
            expected = _contract_formula(x, norm.weight, _norm_eps(norm), contract)
        assert original.dtype == expected.dtype
        assert torch.equal(original, expected), f"{class_name} ({dtype}) is not {contract}"


# ----------------------------------------------------------------------------- single norms


@pytest.mark.parametrize(
    "class_name", ["LlamaRMSNorm", "GemmaRMSNorm", "Qwen3NextRMSNorm", "Olmo2RMSNorm"]
)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_patched_norm_calls_rmsnorm_with_its_contract(norm_classes, class_name, dtype):
    cls = norm_classes.get(class_name)
    if cls is None:
        pytest.skip(f"transformers {transformers.__version__} has no {class_name}")
    contract = KNOWN_CLASSES[class_name]
    norm = cls(64, eps=3e-5)
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(64, generator=generator) * 0.5)
    norm = norm.to(dtype)
    x = (torch.randn(4, 5, 64, generator=generator) * 2).to(dtype).requires_grad_()
    y_ref = norm(x)
    (dx_ref,) = torch.autograd.grad(y_ref.float().sum(), x)

    handle = patch_rmsnorm(norm)
    assert len(handle) == 1
    y = norm(x)
    expected = rmsnorm(
        x.detach(),
        norm.weight.detach(),
        3e-5,
        zero_centered_gamma=contract == "zero_centered_gamma",
        cast_before_weight_mul=contract == "cast_before_weight_mul",
    )
    assert y.dtype == y_ref.dtype == dtype
    assert torch.equal(y, expected)
    (dx,) = torch.autograd.grad(y.float().sum(), x)
    # One rounding step of the output dtype either way; dx vs the original forward's autograd.
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(y, y_ref, atol=tol, rtol=tol)
    torch.testing.assert_close(dx, dx_ref, atol=tol, rtol=tol)
    handle.remove()
    assert "forward" not in norm.__dict__


# ----------------------------------------------------------------------------- whole models


@pytest.mark.parametrize("key", sorted(MODELS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_patched_model_matches_unpatched(key, dtype):
    model = _build_model(key, dtype)
    norm_class = MODELS[key][2]
    expected_count = sum(type(m).__name__ == norm_class for m in model.modules())
    ids = torch.randint(0, SMALL["vocab_size"], (2, 12), generator=torch.Generator().manual_seed(3))
    state_before = _state(model)
    logits_ref, grads_ref = _logits_and_grads(model, ids)

    handle = patch_rmsnorm(model)
    assert len(handle) == expected_count > 0
    assert {contract for _, _, contract in patched_modules(model)} == {KNOWN_CLASSES[norm_class]}
    assert list(model.state_dict()) == list(state_before)
    logits, grads = _logits_and_grads(model, ids)

    # Budgets, scaled by each tensor's largest magnitude. BF16: the patched dx is rounded once
    # from FP32 where transformers' autograd rounds intermediate BF16 products, so upstream
    # gradients move by a few BF16 ulps (measured <= 2.4e-2); FP32: rsqrt vs 1/sqrt only.
    logits_rel, grad_rel = (1e-2, 5e-2) if dtype == torch.bfloat16 else (1e-5, 2e-5)
    _assert_close_scaled(logits, logits_ref, logits_rel, f"{key} logits")
    assert grads.keys() == grads_ref.keys()
    for name in grads:
        assert grads[name].dtype == grads_ref[name].dtype, name
        _assert_close_scaled(grads[name], grads_ref[name], grad_rel, f"{key} grad {name}")

    assert unpatch_rmsnorm(model) == expected_count
    assert not any("forward" in m.__dict__ for m in model.modules())
    logits_after, _ = _logits_and_grads(model, ids)
    assert torch.equal(logits_after, logits_ref)
    state_after = model.state_dict()
    assert list(state_after) == list(state_before)
    for name, tensor in state_before.items():
        assert torch.equal(state_after[name], tensor), name
        assert state_after[name].dtype == tensor.dtype, name


def test_patched_model_routes_every_norm_call_through_rmsnorm(monkeypatch):
    """Each norm call of a patched model reaches rmsnorm with the module's weight and eps."""
    import miles_ext_kernels.integrations.hf as hf

    model = _build_model("qwen3", torch.bfloat16)
    calls = []

    def spy(x, w, eps, **options):
        calls.append((w, eps, options))
        return rmsnorm(x, w, eps, **options)

    monkeypatch.setattr(hf, "rmsnorm", spy)
    handle = patch_rmsnorm(model, deterministic=False, backend="reference")
    with torch.no_grad():
        model(torch.zeros(1, 4, dtype=torch.long))
    # q_norm and k_norm run once per layer, like the decoder norms: one call per module.
    assert len(calls) == len(handle)
    assert {id(w) for w, _, _ in calls} == {id(m.weight) for m in handle.modules}
    for _, eps, options in calls:
        assert eps == model.config.rms_norm_eps
        assert options["cast_before_weight_mul"] is True
        assert options["zero_centered_gamma"] is False
        assert options["deterministic"] is False
        assert options["backend"] == "reference"


def test_patched_layer_compiles_without_graph_breaks(norm_classes):
    """The patched forward is a plain function, so torch.compile(fullgraph=True) traces it."""
    layer = nn.Sequential(nn.Linear(64, 64), norm_classes["Qwen3NextRMSNorm"](64, eps=1e-6))
    layer = layer.to(torch.bfloat16)
    patch_rmsnorm(layer)
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(8)).to(torch.bfloat16)
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    y = compiled(x)
    y.float().square().sum().backward()
    grads = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad(set_to_none=True)
    y_eager = layer(x)
    y_eager.float().square().sum().backward()
    assert torch.equal(y, y_eager)
    for compiled_grad, parameter in zip(grads, layer.parameters(), strict=True):
        assert torch.equal(compiled_grad, parameter.grad)


def test_patched_model_under_gradient_checkpointing_gives_identical_gradients(monkeypatch):
    """transformers' activation checkpointing recomputes the patched norms bit for bit."""
    import miles_ext_kernels.integrations.hf as hf

    calls = []
    monkeypatch.setattr(hf, "rmsnorm", lambda *a, **k: calls.append(1) or rmsnorm(*a, **k))
    model = _build_model("qwen3", torch.bfloat16).train()
    patch_rmsnorm(model)
    ids = torch.randint(0, SMALL["vocab_size"], (2, 8), generator=torch.Generator().manual_seed(9))
    logits_plain, grads_plain = _logits_and_grads(model, ids)
    plain_calls = len(calls)
    if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.x
        model.activation_checkpointing_enable({"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable({"use_reentrant": False})
    logits_ckpt, grads_ckpt = _logits_and_grads(model, ids)
    assert len(calls) - plain_calls > plain_calls  # the decoder layers' norms ran twice
    assert torch.equal(logits_ckpt, logits_plain)
    for name, grad in grads_plain.items():
        assert torch.equal(grads_ckpt[name], grad), name


# ----------------------------------------------------------------------------- patch lifecycle


def test_patch_twice_is_idempotent_and_one_unpatch_restores(monkeypatch):
    import miles_ext_kernels.integrations.hf as hf

    model = _build_model("qwen3", torch.float32)
    norms = [m for m in model.modules() if type(m).__name__ == "Qwen3RMSNorm"]
    first = patch_rmsnorm(model)
    second = patch_rmsnorm(model, deterministic=False)
    assert len(first) == len(second) == len(norms)
    seen = []
    monkeypatch.setattr(hf, "rmsnorm", lambda x, w, eps, **kw: seen.append(kw) or x)
    with torch.no_grad():
        model(torch.zeros(1, 3, dtype=torch.long))
    assert len(seen) == len(norms)
    assert all(options["deterministic"] is False for options in seen)
    assert unpatch_rmsnorm(model) == len(norms)
    for norm in norms:
        assert "forward" not in norm.__dict__
        assert norm.forward.__func__ is type(norm).forward
    assert first.remove() == 0
    assert unpatch_rmsnorm(model) == 0


def test_handle_remove_and_context_manager_restore_forwards():
    model = _build_model("gemma", torch.float32)
    ids = torch.randint(0, SMALL["vocab_size"], (1, 6), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        reference = model(ids).logits
    with patch_rmsnorm(model) as handle:
        assert isinstance(handle, PatchHandle)
        assert len(list(patched_modules(model))) == len(handle) > 0
    assert list(patched_modules(model)) == []
    handle = patch_rmsnorm(model)
    assert handle.remove() == len([m for m in model.modules() if "RMSNorm" in type(m).__name__])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, reference)


def test_existing_instance_forward_is_restored():
    """A forward already set on the instance (by another tool) is put back, not deleted."""
    norm = _build_model("llama", torch.float32).model.norm
    sentinel_calls = []

    def custom_forward(hidden_states):
        sentinel_calls.append(1)
        return hidden_states

    norm.forward = custom_forward
    patch_rmsnorm(norm)
    assert norm.forward is not custom_forward
    unpatch_rmsnorm(norm)
    assert norm.forward is custom_forward


def test_deepcopy_of_patched_model_stays_patched_on_the_copy():
    model = _build_model("llama", torch.float32)
    patch_rmsnorm(model)
    clone = copy.deepcopy(model)
    for name, module, _ in patched_modules(clone):
        assert module.forward.__self__ is module, name
    assert unpatch_rmsnorm(clone) == len(list(patched_modules(model)))


# ----------------------------------------------------------------------------- classes= and errors


class TinyNorm(nn.Module):
    """A user norm the built-in table does not know (Llama formula, ``epsilon`` attribute)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, hidden))
        self.epsilon = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _contract_formula(x, self.weight, self.epsilon, "cast_before_weight_mul")


@pytest.mark.parametrize("key", [TinyNorm, "TinyNorm"], ids=["class", "name"])
def test_classes_mapping_adds_a_user_class(key):
    norm = TinyNorm(64).to(torch.bfloat16)
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)
    assert len(patch_rmsnorm(norm)) == 0
    handle = patch_rmsnorm(norm, classes={key: "cast_before_weight_mul"})
    assert len(handle) == 1
    expected = rmsnorm(x, norm.weight.detach(), 1e-6, cast_before_weight_mul=True)
    with torch.no_grad():
        assert torch.equal(norm(x), expected)


def test_unknown_class_logs_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="miles_ext_kernels.integrations.hf"):
        handle = patch_rmsnorm(nn.Linear(4, 4))
    assert len(handle) == 0
    assert "no RMSNorm module" in caplog.text


@pytest.mark.parametrize(
    ("weight_dtype", "input_dtype", "out_dtype"),
    [
        # Llama computes w * cast(x * r): an FP32 weight promotes a BF16 input's output to FP32.
        (torch.float32, torch.bfloat16, torch.float32),
        # rmsnorm takes no FP64 tensors.
        (torch.float64, torch.float64, torch.float64),
    ],
)
def test_dtypes_the_kernel_cannot_reproduce_fall_back_or_raise(
    norm_classes, caplog, monkeypatch, weight_dtype, input_dtype, out_dtype
):
    import miles_ext_kernels.integrations.hf as hf

    monkeypatch.setattr(hf, "_logged_fallbacks", set())  # the warning is logged once per reason
    monkeypatch.delenv("MILES_EXT_KERNELS_STRICT", raising=False)
    norm = norm_classes["LlamaRMSNorm"](64, eps=1e-6).to(weight_dtype)
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(6)).to(input_dtype)
    with torch.no_grad():
        reference = norm(x)
        patch_rmsnorm(norm)
        with caplog.at_level(logging.WARNING, logger="miles_ext_kernels.integrations.hf"):
            out = norm(x)
    assert out.dtype == reference.dtype == out_dtype
    assert torch.equal(out, reference)
    assert "original forward" in caplog.text
    monkeypatch.setenv("MILES_EXT_KERNELS_STRICT", "1")
    with pytest.raises(RMSNormUnsupportedError, match="LlamaRMSNorm"):
        norm(x)
    monkeypatch.delenv("MILES_EXT_KERNELS_STRICT")
    patch_rmsnorm(norm, strict=True)
    with pytest.raises(RMSNormUnsupportedError, match="LlamaRMSNorm"):
        norm(x)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"model": "not a module"}, TypeError, "model"),
        ({"classes": ["LlamaRMSNorm"]}, TypeError, "classes"),
        ({"classes": {"MyNorm": "llama"}}, ValueError, "contract"),
        ({"classes": {3: "default"}}, TypeError, "classes"),
        ({"deterministic": "yes"}, TypeError, "deterministic"),
        ({"backend": 1}, TypeError, "backend"),
        ({"backend": "no-such-backend"}, ValueError, "backend"),
        ({"strict": 1}, TypeError, "strict"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, match):
    arguments = {"model": nn.Sequential(TinyNorm(8))} | kwargs
    model = arguments.pop("model")
    with pytest.raises(error, match=match):
        patch_rmsnorm(model, **arguments)
    if isinstance(model, nn.Module):
        assert list(patched_modules(model)) == []


def test_module_without_epsilon_is_refused_at_patch_time():
    norm = TinyNorm(8)
    del norm.epsilon
    with pytest.raises(ValueError, match="TinyNorm.*epsilon"):
        patch_rmsnorm(norm, classes={TinyNorm: "default"})
    assert "forward" not in norm.__dict__


def test_patched_forward_takes_the_input_by_the_original_parameter_name(norm_classes):
    """Gemma-style norms name their input ``x``; ``norm(x=...)`` keeps working once patched."""
    norm = norm_classes["GemmaRMSNorm"](64, eps=1e-6).to(torch.bfloat16)
    _randomise_norm_weights(norm, 10)
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(11)).to(torch.bfloat16)
    signature = inspect.signature(norm.forward)
    patch_rmsnorm(norm)
    expected = rmsnorm(x, norm.weight.detach(), 1e-6, zero_centered_gamma=True)
    with torch.no_grad():
        assert torch.equal(norm(x=x), expected)
        assert torch.equal(norm(x), expected)
    assert inspect.signature(norm.forward) == signature
    with pytest.raises(TypeError, match=r"GemmaRMSNorm.forward .*takes one argument, x"):
        norm(hidden_states=x)
    with pytest.raises(TypeError, match="takes one argument"):
        norm(x, x)


class GatedTinyNorm(TinyNorm):
    """A user norm whose forward takes a parameter besides the input."""

    def forward(self, x: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:
        y = super().forward(x)
        return y if gate is None else y * gate


def test_forward_with_other_parameters_is_left_unpatched_with_a_warning(caplog):
    model = nn.Sequential(TinyNorm(8), GatedTinyNorm(8))
    classes = {TinyNorm: "cast_before_weight_mul", GatedTinyNorm: "cast_before_weight_mul"}
    with caplog.at_level(logging.WARNING, logger="miles_ext_kernels.integrations.hf"):
        handle = patch_rmsnorm(model, classes=classes)
    assert handle.modules == [model[0]]
    assert "forward" not in model[1].__dict__
    assert "GatedTinyNorm" in caplog.text and "takes other parameters" in caplog.text
    x, gate = torch.randn(2, 8), torch.full((2, 8), 2.0)
    with torch.no_grad():
        assert torch.equal(model[1](x, gate=gate), 2.0 * model[1](x))


def test_forward_with_other_parameters_is_refused_in_strict_mode():
    model = nn.Sequential(TinyNorm(8), GatedTinyNorm(8))
    classes = {TinyNorm: "cast_before_weight_mul", GatedTinyNorm: "cast_before_weight_mul"}
    with pytest.raises(RMSNormUnsupportedError, match=r"GatedTinyNorm.*gate"):
        patch_rmsnorm(model, classes=classes, strict=True)
    assert list(patched_modules(model)) == []


def test_unpatch_refuses_a_non_module():
    with pytest.raises(TypeError, match="model"):
        unpatch_rmsnorm(object())
