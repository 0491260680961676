"""Dispatcher choices with a faked device and package set, and the program backend's binding.

The program backend is exercised on CPU by replacing ``jit.run_module`` with a fake kernel that
reads its inputs through the bound strides and computes with the reference backend.
"""

from __future__ import annotations

import logging

import _fakes
import pytest
import torch

from miles_ext_kernels.cake import (
    RMSNormUnsupportedError,
    dispatch,
    explain,
    is_supported,
    jit,
    rmsnorm,
    rmsnorm_backward,
    rmsnorm_forward,
    rmsnorm_workspace,
    rmsnorm_workspace_bytes,
    routing,
)
from miles_ext_kernels.cake.backends import programs, reference
from miles_ext_kernels.cake.ops.rmsnorm import call_spec

SM100 = (10, 0)
SM90 = (9, 0)


@pytest.fixture
def device(request):
    """Fake the device capability (parametrised) and the package set for one test."""
    capability, sm_count = getattr(request, "param", (SM100, 148))
    with dispatch.override(device_info=_fakes.fake_device(capability, sm_count),
                           packages=_fakes.fake_packages()):
        yield
    dispatch.clear_caches()


def _decide(kind="fwd", hidden=2048, x=torch.bfloat16, w=torch.bfloat16, rows=100, **kw):
    options = {k: kw.pop(k) for k in ("residual", "zero_centered_gamma",
                                      "cast_before_weight_mul") if k in kw}
    spec = call_spec(kind, hidden, x, w, residual=options.get("residual", False),
                     zero_centered_gamma=options.get("zero_centered_gamma", False),
                     cast_before_weight_mul=options.get("cast_before_weight_mul", False))
    return dispatch.decide(spec, "cpu", rows=rows, **kw)


def test_sm100_bf16_default_is_vendored_and_rows_pick_the_program(device):
    small = _decide(rows=100)
    large = _decide(rows=5000)
    assert small.backend == "vendored" and small.route.arch == "sm_100a"
    assert [m.name for m in small.route.modules] == ["v_fwd_small_h2048"]
    assert [m.name for m in large.route.modules] == ["v_fwd_large_h2048"]
    bwd = _decide("bwd", rows=5000)
    assert bwd.backend == "vendored" and bwd.route.workspace_module.name == "v_bwd_h2048"


@pytest.mark.parametrize(("change", "reason"), [
    ({"w": torch.float32}, "x and w must be bfloat16"),
    ({"zero_centered_gamma": True}, "only the default contract"),
    ({"cast_before_weight_mul": True}, "only the default contract"),
    ({"hidden": 896}, "no route for hidden=896"),
    ({"residual": True}, "no route"),
    ({"x": torch.float16, "w": torch.float32}, "x and w must be bfloat16"),
])
def test_first_party_serves_what_vendored_does_not(device, change, reason):
    decision = _decide(**change)
    assert decision.backend == "first_party"
    assert decision.rejected[0][0] == "vendored" and reason in decision.rejected[0][1]


@pytest.mark.parametrize("device", [(SM90, 132)], indirect=True)
def test_hopper_goes_to_first_party(device):
    decision = _decide()
    assert decision.backend == "first_party" and decision.route.arch == "sm_90a"
    assert "no program for compute capability 9.0" in decision.rejected[0][1]


@pytest.mark.parametrize("device", [((8, 0), 108)], indirect=True)
def test_uncovered_gpu_falls_back_to_reference_and_logs_once(device, caplog):
    caplog.set_level(logging.INFO, logger="miles_ext_kernels")
    x = torch.randn(4, 2048).to(torch.bfloat16)
    w = torch.ones(2048, dtype=torch.bfloat16)
    for _ in range(3):
        y, _ = rmsnorm_forward(x, w)
    fallbacks = [r for r in caplog.records if "falls back to the PyTorch reference" in r.message]
    assert len(fallbacks) == 1
    assert torch.equal(y, reference.reference_forward(x, w, 1e-6)[0])
    with pytest.raises(RMSNormUnsupportedError, match="strict mode"):
        rmsnorm_forward(x, w, strict=True)


def test_cpu_is_reference_and_strict_raises(monkeypatch):
    x = torch.randn(4, 2048).to(torch.bfloat16)
    w = torch.ones(2048, dtype=torch.bfloat16)
    decision = dispatch.decide(call_spec("fwd", 2048, x.dtype, w.dtype, residual=False,
                                         zero_centered_gamma=False,
                                         cast_before_weight_mul=False), "cpu", rows=4)
    assert decision.backend == "reference" and decision.fallback
    with pytest.raises(RMSNormUnsupportedError, match="no CUDA device|not a CUDA device"):
        rmsnorm_forward(x, w, strict=True)
    monkeypatch.setenv("MILES_EXT_KERNELS_STRICT", "1")
    with pytest.raises(RMSNormUnsupportedError):
        rmsnorm(x, w)
    rmsnorm(x, w, backend="reference")  # an explicit reference request is not a fallback
    rmsnorm(x, w, strict=False)


def test_forced_backends(device, monkeypatch, caplog):
    assert _decide(backend="reference").backend == "reference"
    assert _decide(backend="first_party").backend == "first_party"
    monkeypatch.setenv("MILES_EXT_KERNELS_RMSNORM_BACKEND", "first_party")
    assert _decide().backend == "first_party"
    assert _decide(backend="auto").backend == "vendored"  # the argument wins over the env
    monkeypatch.delenv("MILES_EXT_KERNELS_RMSNORM_BACKEND")
    caplog.set_level(logging.WARNING, logger="miles_ext_kernels")
    forced = _decide(w=torch.float32, backend="vendored")
    assert forced.backend == "first_party" and forced.fallback
    assert any("backend='vendored' cannot serve" in r.message for r in caplog.records)
    with pytest.raises(RMSNormUnsupportedError, match="the vendored backend"):
        _decide(w=torch.float32, backend="vendored", strict=True)


def test_strict_messages_read_as_sentences(device):
    with pytest.raises(RMSNormUnsupportedError) as auto:
        _decide(hidden=100, strict=True)
    assert "no Cake program serves it" in str(auto.value) and "has no a" not in str(auto.value)
    with pytest.raises(RMSNormUnsupportedError) as forced:
        _decide(w=torch.float32, backend="vendored", strict=True)
    assert "the vendored backend cannot serve it" in str(forced.value)
    assert "has no the" not in str(forced.value)


def _missing_cuda_device() -> str:
    """A CUDA device name that does not exist here."""
    if not torch.cuda.is_available():
        return "cuda"
    return f"cuda:{torch.cuda.device_count() + 7}"


def test_a_missing_cuda_device_is_unsupported_or_a_clear_error():
    dispatch.clear_caches()
    missing = _missing_cuda_device()
    assert is_supported(missing, 4096) is False
    assert is_supported(torch.device(missing), 4096, backend="first_party") is False
    if not torch.cuda.is_available():
        assert is_supported("cuda:0", 4096) is False
    with pytest.raises(dispatch.DeviceUnavailableError, match=f"'{missing}' is not available"):
        rmsnorm_workspace(64, missing)
    with pytest.raises(ValueError, match="is not available"):
        rmsnorm_workspace_bytes(64, missing)


def _forward_error(x, w, **kwargs):
    try:
        rmsnorm_forward(x, w, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize(("x", "w", "kwargs"), [
    (torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(63), {}),
    (torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(64, 1), {}),
    (torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(64),
     {"residual": torch.ones(3, 64, dtype=torch.bfloat16)}),
    (torch.ones(4, 64, dtype=torch.int32), torch.ones(64), {}),
    (torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(64, dtype=torch.int8), {}),
    (torch.ones(4, 0, dtype=torch.bfloat16), torch.ones(0), {}),
    (torch.tensor(1.0), torch.ones(1), {}),
    ("x", torch.ones(64), {}),
    (torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(64), {"zero_centered_gamma": 1}),
])
def test_explain_checks_the_arguments_as_rmsnorm_does(x, w, kwargs):
    expected = _forward_error(x, w, **kwargs)
    assert expected is not None
    with pytest.raises(expected[0]) as info:
        explain(x, w, **kwargs)
    assert str(info.value) == expected[1]


def test_explain_reports_what_strict_mode_does(monkeypatch):
    dispatch.clear_caches()
    x = torch.randn(4, 2048).to(torch.bfloat16)
    w = torch.ones(2048, dtype=torch.bfloat16)
    assert explain(x, w).backend == "reference" and not explain(x, w).raises
    monkeypatch.setenv("MILES_EXT_KERNELS_STRICT", "1")
    with pytest.raises(RMSNormUnsupportedError):
        rmsnorm_forward(x, w)
    text = explain(x, w)
    assert text.raises and text.backend == "error" and text.backward.backend == "error"
    assert text.forward.error.startswith("RMSNormUnsupportedError: strict mode")
    assert "the call raises: RMSNormUnsupportedError" in str(text)
    assert explain(x, w, strict=False).backend == "reference"
    assert explain(x, w, backend="reference").backend == "reference"  # never a fallback
    empty = explain(x[:0], w)  # no rows: the call returns empty outputs, it does not raise
    assert not empty.raises and rmsnorm_forward(x[:0], w)[0].shape == (0, 2048)


def test_nondeterministic_prefers_bwd_nondet(device):
    fp = _decide("bwd", hidden=896, deterministic=False)
    assert fp.route.kind == "bwd_nondet" and fp.route.workspace_module is None
    assert _decide("bwd", hidden=896).route.kind == "bwd"
    vendored = _decide("bwd", hidden=2048, deterministic=False)
    assert vendored.backend == "vendored" and vendored.route.kind == "bwd"


def test_explain_lists_programs_grids_and_reasons(device):
    x = torch.randn(3000, 2048).to(torch.bfloat16)
    text = explain(x, torch.ones(2048))
    assert text.backend == "first_party"
    assert text.forward.programs == ("fp_fwd",) and text.forward.grids == ((750, 1, 1),)
    record = _fakes.FakeFirstParty().modules["fp_bwd"]
    assert text.backward.n_chunks == 256  # min(max_chunks, ceil(3000 / 8))
    assert text.backward.workspace_bytes == routing.workspace_bytes(record, sm_count=148,
                                                                    hidden=2048)
    assert "x and w must be bfloat16" in str(text)
    vendored = explain(x, torch.ones(2048, dtype=torch.bfloat16))
    assert vendored.backward.grids == ((296, 1, 1),) and vendored.backward.n_chunks == 296


def test_is_supported(device):
    assert is_supported("cpu", 2048)
    assert is_supported("cpu", 896, weight_dtype=torch.float32, zero_centered_gamma=True)
    assert not is_supported("cpu", 100)  # not a multiple of 8
    assert not is_supported("cpu", 2048, dtype=torch.float32)
    assert not is_supported("cpu", 2048, backend="vendored", weight_dtype=torch.float32)
    assert is_supported("cpu", 100, backend="reference")


def test_is_supported_on_real_cpu():
    assert not is_supported("cpu", 2048)
    assert rmsnorm_workspace_bytes(2048, "cpu") == 0
    assert rmsnorm_workspace(2048, "cpu").numel() == 0


def test_workspace_bytes_follow_the_route(device):
    vendored = _fakes.FakeVendored().modules["v_bwd_h2048"]
    first_party = _fakes.FakeFirstParty().modules["fp_bwd"]
    assert rmsnorm_workspace_bytes(2048, "cpu") == routing.workspace_bytes(
        vendored, sm_count=148)
    # FP32 partials for 2 * 148 chunks, then counters at a 256-byte boundary.
    assert rmsnorm_workspace_bytes(2048, "cpu") == 4 * 296 * 2048 + 256
    assert rmsnorm_workspace_bytes(896, "cpu") == 8 * 256 * 896 + 256 == routing.workspace_bytes(
        first_party, sm_count=148, hidden=896)
    assert rmsnorm_workspace_bytes(896, "cpu", deterministic=False) == 0
    ws = rmsnorm_workspace(896, "cpu")
    assert ws.dtype == torch.uint8 and ws.numel() == 8 * 256 * 896 + 256 and not ws.any()


# ----------------------------------------------------------------------------- program backend


class FakeKernels:
    """Stands in for ``jit.run_module``: reads inputs through the bound strides."""

    def __init__(self):
        self.calls = []

    @staticmethod
    def _rows(t, rows, hidden, heads, stride, head_stride):
        if t.dim() == 3 and heads > 1:
            return t.reshape(-1, hidden)
        return torch.as_strided(t, (rows // heads, heads, hidden),
                                (stride, head_stride, 1)).reshape(rows, hidden)

    def __call__(self, package, record, values, *, rows, arch, sm_count, grid=None):
        self.calls.append((record.name, dict(values), grid))
        hidden = values["hidden"]
        heads = values.get("heads", 1)
        flags = values["flags"]
        options = {"zero_centered_gamma": bool(flags & programs.FLAG_ZERO_CENTERED_GAMMA),
                   "cast_before_weight_mul": bool(flags & programs.FLAG_CAST_BEFORE_WEIGHT_MUL)}
        x = self._rows(values["x"], rows, hidden, heads, values["x_stride"],
                       values.get("x_head_stride", hidden))
        if record.role.startswith("fwd"):
            residual = None
            if flags & programs.FLAG_RESIDUAL:
                residual = self._rows(values["u"], rows, hidden, heads, values["u_stride"],
                                      values.get("u_head_stride", hidden))
            out = reference.reference_forward(x, values["w"], values["eps"], residual=residual,
                                              **options)
            values["y"].copy_(out[0])
            values["r"].copy_(out[1])
            if residual is not None:
                values["h_new"].copy_(out[2])
            return
        g = self._rows(values["g"], rows, hidden, heads, values["g_stride"],
                       values.get("g_head_stride", hidden))
        gh = None
        if flags & programs.FLAG_RESIDUAL:
            gh = self._rows(values["g_h"], rows, hidden, heads, values["g_h_stride"],
                            values.get("g_h_head_stride", hidden))
        dx, dw = reference.reference_backward(g, x, values["w"], values["r"], g_residual=gh,
                                              **options)
        values["dx"].copy_(dx)
        if record.workspace_rule["kind"] == "atomic":
            values["dw"].add_(dw)  # atomics accumulate into the zeroed dw
        else:
            values["dw"].copy_(dw)


@pytest.fixture
def kernels(monkeypatch):
    fake = FakeKernels()
    monkeypatch.setattr(jit, "run_module", fake)
    return fake


@pytest.mark.parametrize("residual", [False, True])
def test_first_party_binding_matches_reference(device, kernels, residual):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(40, 896, generator=gen).to(torch.bfloat16)
    u = torch.randn(40, 896, generator=gen).to(torch.bfloat16) if residual else None
    w = torch.rand(896, generator=gen)  # FP32 weight -> first-party
    outs = rmsnorm_forward(x, w, residual=u, zero_centered_gamma=True)
    ref = reference.reference_forward(x, w, 1e-6, residual=u, zero_centered_gamma=True)
    assert all(torch.equal(a, b) for a, b in zip(outs, ref, strict=True))
    name, values, _ = kernels.calls[-1]
    assert name == "fp_fwd"
    expected_flags = programs.FLAG_ZERO_CENTERED_GAMMA | programs.FLAG_W_FP32 | (
        programs.FLAG_RESIDUAL if residual else 0)
    assert values["flags"] == expected_flags
    if not residual:  # upstream's binding rules without a residual
        assert values["u"] is values["x"] and values["h_new"] is values["y"]
        assert values["u_stride"] == 0
    g = torch.randn(40, 896, generator=gen).to(torch.bfloat16)
    gh = torch.randn(40, 896, generator=gen).to(torch.bfloat16) if residual else None
    normalised = outs[2] if residual else x
    dx, dw = rmsnorm_backward(g, normalised, w, outs[1], g_residual=gh, zero_centered_gamma=True)
    dx_ref, dw_ref = reference.reference_backward(g, normalised, w, outs[1], g_residual=gh,
                                                  zero_centered_gamma=True)
    assert torch.equal(dx, dx_ref) and torch.equal(dw, dw_ref)
    name, values, _ = kernels.calls[-1]
    assert name == "fp_bwd"
    assert values["partial"].dtype == torch.float64 and values["counters"].dtype == torch.uint32
    assert values["n_chunks"] == 5 and values["rows_per_chunk"] == 8  # min(256, ceil(40/8))
    if not residual:
        assert values["g_h"] is values["g"] and values["g_h_stride"] == values["g_stride"]


def test_vendored_binding_workspace_and_forced_grid(device, kernels):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(64, 2048, generator=gen).to(torch.bfloat16)
    w = torch.rand(2048, generator=gen).to(torch.bfloat16)
    _, rstd = rmsnorm_forward(x, w)
    assert kernels.calls[-1][0] == "v_fwd_small_h2048"
    ws = rmsnorm_workspace(2048, "cpu")
    g = torch.randn_like(x)
    rmsnorm_backward(g, x, w, rstd, workspace=ws, grid=7)
    name, values, grid = kernels.calls[-1]
    assert name == "v_bwd_h2048" and grid == (7, 1, 1)
    assert values["n_chunks"] == 7 and values["rows_per_chunk"] == 10
    assert values["partial"].dtype == torch.float32
    assert values["partial"].data_ptr() == ws.data_ptr()
    assert values["counters"].data_ptr() == ws.data_ptr() + 4 * 296 * 2048
    with pytest.raises(ValueError, match="workspace holds"):
        rmsnorm_backward(g, x, w, rstd, workspace=ws[:1024])
    with pytest.raises(ValueError, match="1-D uint8"):
        rmsnorm_backward(g, x, w, rstd, workspace=torch.zeros(ws.numel()))


def test_layouts_in_place_or_copied(device, kernels):
    gen = torch.Generator().manual_seed(2)
    buffer = torch.randn(32, 2048 + 16, generator=gen).to(torch.bfloat16)
    w = torch.ones(2048, dtype=torch.bfloat16)
    aligned = buffer[:, :2048]  # row stride 2064 elements = 4128 bytes: 32-byte aligned
    rmsnorm_forward(aligned, w)
    values = kernels.calls[-1][1]
    assert values["x"].data_ptr() == aligned.data_ptr() and values["x_stride"] == 2064
    shifted = buffer[:, 8:2056]  # base 16 bytes off: legal but misaligned for upstream fwd
    y, _ = rmsnorm_forward(shifted, w)
    values = kernels.calls[-1][1]
    assert values["x"].data_ptr() != shifted.data_ptr() and values["x_stride"] == 2048
    assert torch.equal(y, reference.reference_forward(shifted.contiguous(), w, 1e-6)[0])


def test_per_head_views_reach_first_party_programs(device, kernels):
    gen = torch.Generator().manual_seed(3)
    qkv = torch.randn(12, 3 * 4 * 128, generator=gen).to(torch.bfloat16)
    q = qkv[:, 4 * 128: 8 * 128].view(12, 4, 128)
    w = torch.rand(128, generator=gen)
    y, rstd = rmsnorm_forward(q, w)
    y_ref, _ = reference.reference_forward(q.reshape(-1, 128), w, 1e-6)
    assert torch.equal(y.reshape(-1, 128), y_ref)
    values = kernels.calls[-1][1]
    route = dispatch.decide(call_spec("fwd", 128, q.dtype, w.dtype, residual=False,
                                      zero_centered_gamma=False, cast_before_weight_mul=False),
                            "cpu", rows=48).route
    if programs.route_takes_heads(route):
        assert values["heads"] == 4 and values["x_stride"] == 3 * 4 * 128
        assert values["x_head_stride"] == 128 and values["x"].data_ptr() == q.data_ptr()
    else:  # programs without per-head strides get a contiguous copy
        assert values["x_stride"] == 128


def test_nondeterministic_route_zeroes_dw_and_needs_no_workspace(device, kernels):
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(30, 896, generator=gen).to(torch.bfloat16)
    w = torch.rand(896, generator=gen).to(torch.bfloat16)
    _, rstd = rmsnorm_forward(x, w)
    g = torch.randn_like(x)
    dw_buffer = torch.full((896,), 1e6)
    _, dw = rmsnorm_backward(g, x, w, rstd, deterministic=False, dw=dw_buffer)
    name, values, _ = kernels.calls[-1]
    assert name == "fp_bwd_nondet" and "partial" not in values and "counters" not in values
    assert dw is dw_buffer
    assert torch.equal(dw, reference.reference_backward(g, x, w, rstd)[1])
