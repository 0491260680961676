"""Launch plans on a GPU: a replayed call makes the full path's launches, bit for bit.

Needs a CUDA device with a first-party (or vendored) program for it (H200: sm_90a).
"""

from __future__ import annotations

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("CUDA is not available: the launch-plan GPU tests need a GPU",
                allow_module_level=True)

from miles_ext_kernels.cake import (  # noqa: E402
    dispatch,
    is_supported,
    rmsnorm,
    rmsnorm_backward,
    rmsnorm_forward,
    rmsnorm_workspace,
)
from miles_ext_kernels.cake.backends import launch_plans, programs  # noqa: E402
from miles_ext_kernels.cake.ops import rmsnorm as ops  # noqa: E402

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda")


@pytest.fixture(autouse=True)
def fresh_plans():
    launch_plans.clear()
    yield
    launch_plans.clear()


@pytest.fixture
def no_dispatch(monkeypatch):
    """Make any call that reaches the dispatcher fail: a replay must not."""
    def refuse(*args, **kwargs):
        raise AssertionError("the call went through the dispatcher")

    def install():
        monkeypatch.setattr(dispatch, "decide", refuse)
    return install


def _require(hidden, **kw):
    if not is_supported(DEV, hidden, **kw):
        pytest.skip(f"no Cake program for hidden={hidden} {kw} on this GPU")


def _layout(kind, rows, hidden, gen):
    """An input of ``rows`` rows of width ``hidden`` in one of the layouts trainers pass."""
    if kind == "2d":
        return torch.randn(rows, hidden, device=DEV, generator=gen).bfloat16()
    if kind == "3d":
        return torch.randn(2, rows // 2, hidden, device=DEV, generator=gen).bfloat16()
    # per-head view of a fused QKV buffer: [T, heads, D] with a row stride of 3 * heads * D
    qkv = torch.randn(rows // 4, 3, 4, hidden, device=DEV, generator=gen).bfloat16()
    return qkv[:, 1]


@pytest.mark.parametrize("kind", ["2d", "3d", "heads"])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("rows", [4, 1000])
def test_forward_replay_has_the_full_path_bits(kind, residual, rows, no_dispatch):
    hidden = 128 if kind == "heads" else 2048
    _require(hidden, residual=residual)
    gen = torch.Generator(device=DEV).manual_seed(rows)
    x = _layout(kind, rows, hidden, gen)
    u = torch.randn(x.shape, device=DEV, generator=gen).bfloat16() if residual else None
    w = (torch.rand(hidden, device=DEV, generator=gen) + 0.5).bfloat16()
    first = rmsnorm_forward(x, w, residual=u)
    assert launch_plans.plan_count() == 1
    full = rmsnorm_forward(x, w, residual=u, out=torch.empty_like(x))  # never planned
    no_dispatch()
    x2 = x.clone() if kind != "heads" else _layout(kind, rows, hidden, gen).copy_(x)
    replay = rmsnorm_forward(x2, w, residual=u)
    assert launch_plans.plan_count() == 1
    for a, b, c in zip(first, full, replay, strict=True):
        assert a.shape == c.shape and a.dtype == c.dtype
        assert torch.equal(a, b) and torch.equal(a, c)


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("rows", [4, 1000])
def test_backward_replay_has_the_full_path_bits(deterministic, residual, rows, no_dispatch):
    hidden = 4096
    _require(hidden, residual=residual)
    gen = torch.Generator(device=DEV).manual_seed(rows + 7)
    x = torch.randn(2, rows // 2, hidden, device=DEV, generator=gen).bfloat16()
    w = (torch.rand(hidden, device=DEV, generator=gen) + 0.5).bfloat16()
    g = torch.randn(x.shape, device=DEV, generator=gen).bfloat16()
    gh = torch.randn(x.shape, device=DEV, generator=gen).bfloat16() if residual else None
    _, rstd = rmsnorm_forward(x, w)
    launch_plans.clear()
    first = rmsnorm_backward(g, x, w, rstd, g_residual=gh, deterministic=deterministic)
    assert launch_plans.plan_count() == 1
    full = rmsnorm_backward(g, x, w, rstd, g_residual=gh, deterministic=deterministic,
                            dw=torch.empty(hidden, device=DEV))  # never planned
    no_dispatch()
    replays = [rmsnorm_backward(g, x, w, rstd, g_residual=gh, deterministic=deterministic)
               for _ in range(3)]
    assert launch_plans.plan_count() == 1
    assert torch.equal(first[0], full[0]) and first[0].shape == x.shape
    for dx, dw in replays:
        assert torch.equal(dx, first[0])
        if deterministic:
            assert torch.equal(dw, first[1]) and torch.equal(dw, full[1])
        else:  # atomics: the replayed dw starts from zeros too
            torch.testing.assert_close(dw, first[1], rtol=1e-5, atol=1e-5)


def test_backward_with_a_caller_workspace_replays_per_buffer(no_dispatch):
    hidden, rows = 4096, 3000
    _require(hidden)
    gen = torch.Generator(device=DEV).manual_seed(5)
    x = torch.randn(rows, hidden, device=DEV, generator=gen).bfloat16()
    w = (torch.rand(hidden, device=DEV, generator=gen) + 0.5).bfloat16()
    g = torch.randn(rows, hidden, device=DEV, generator=gen).bfloat16()
    _, rstd = rmsnorm_forward(x, w)
    launch_plans.clear()
    first, second = rmsnorm_workspace(hidden, DEV), rmsnorm_workspace(hidden, DEV)
    expected = rmsnorm_backward(g, x, w, rstd, workspace=first)
    rmsnorm_backward(g, x, w, rstd, workspace=second)
    assert launch_plans.plan_count() == 2  # one plan per buffer
    no_dispatch()
    for workspace in (first, second, first):
        dx, dw = rmsnorm_backward(g, x, w, rstd, workspace=workspace)
        assert torch.equal(dx, expected[0]) and torch.equal(dw, expected[1])
    assert launch_plans.plan_count() == 2


def test_misaligned_input_takes_the_full_path(no_dispatch):
    hidden, rows = 2048, 64
    _require(hidden)
    gen = torch.Generator(device=DEV).manual_seed(3)
    buffer = torch.randn(rows * hidden + 8, device=DEV, generator=gen).bfloat16()
    aligned = buffer[: rows * hidden].view(rows, hidden)
    shifted = buffer[1: 1 + rows * hidden].view(rows, hidden)  # same signature, 2 bytes off
    w = (torch.rand(hidden, device=DEV, generator=gen) + 0.5).bfloat16()
    rmsnorm_forward(aligned, w)
    assert launch_plans.plan_count() == 1
    reference = rmsnorm_forward(shifted.clone(), w)
    y, rstd = rmsnorm_forward(shifted, w)  # the plan refuses it: full path, which copies
    assert torch.equal(y, reference[0]) and torch.equal(rstd, reference[1])
    no_dispatch()
    with pytest.raises(AssertionError, match="dispatcher"):
        rmsnorm_forward(shifted, w)


def test_backward_plans_are_per_stream():
    hidden, rows = 1024, 256
    _require(hidden)
    x = torch.randn(rows, hidden, device=DEV).bfloat16()
    w = torch.ones(hidden, device=DEV, dtype=torch.bfloat16)
    g = torch.randn_like(x)
    _, rstd = rmsnorm_forward(x, w)
    launch_plans.clear()
    dx, dw = rmsnorm_backward(g, x, w, rstd)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dx2, dw2 = rmsnorm_backward(g, x, w, rstd)
        dx3, dw3 = rmsnorm_backward(g, x, w, rstd)
    torch.cuda.current_stream().wait_stream(side)
    assert launch_plans.plan_count() == 2
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)
    assert torch.equal(dx, dx3) and torch.equal(dw, dw3)


def test_autograd_steps_replay_with_the_same_bits():
    hidden = 2048
    _require(hidden)
    gen = torch.Generator(device=DEV).manual_seed(11)
    x0 = torch.randn(8, hidden, device=DEV, generator=gen).bfloat16()
    g = torch.randn(8, hidden, device=DEV, generator=gen).bfloat16()
    w = torch.nn.Parameter((torch.rand(hidden, device=DEV, generator=gen) + 0.5).bfloat16())
    grads = []
    for _ in range(3):
        x = x0.clone().requires_grad_()
        w.grad = None
        rmsnorm(x, w).backward(g)
        grads.append((x.grad, w.grad))
    assert launch_plans.plan_count() == 2  # one forward, one backward signature
    for dx, dw in grads[1:]:
        assert torch.equal(dx, grads[0][0]) and torch.equal(dw, grads[0][1])


def test_small_batch_backward_allocates_no_workspace():
    hidden, rows = 4096, 2
    _require(hidden)
    spec = ops.call_spec("bwd", hidden, torch.bfloat16, torch.bfloat16, residual=False,
                         zero_centered_gamma=False, cast_before_weight_mul=False)
    route = dispatch.decide(spec, DEV, rows=rows).route
    owner = route.workspace_module
    if owner is None or any(m.name == owner.name for m in route.modules):
        pytest.skip("on this GPU the route's workspace owner serves small batches too")
    programs.clear_workspace_cache()
    x = torch.randn(rows, hidden, device=DEV).bfloat16()
    w = torch.ones(hidden, device=DEV, dtype=torch.bfloat16)
    _, rstd = rmsnorm_forward(x, w)
    dx, dw = rmsnorm_backward(torch.randn_like(x), x, w, rstd)
    torch.cuda.synchronize()
    assert programs._WORKSPACES == {}
    assert torch.isfinite(dx).all() and torch.isfinite(dw).all()
