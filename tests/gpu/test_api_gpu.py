"""Public API on a real GPU: program backends vs the reference, layouts, compile, CUDA graphs.

Needs a CUDA device with a first-party (or vendored) program for it (H200: sm_90a).
"""

from __future__ import annotations

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("CUDA is not available: the API GPU tests need a GPU", allow_module_level=True)

from miles_ext_kernels.cake import (  # noqa: E402
    RMSNorm,
    explain,
    is_supported,
    rmsnorm,
    rmsnorm_backward,
    rmsnorm_forward,
    rmsnorm_workspace,
    rmsnorm_workspace_bytes,
)
from miles_ext_kernels.cake.backends import programs  # noqa: E402

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda")
CONTRACTS = [{}, {"cast_before_weight_mul": True}, {"zero_centered_gamma": True}]


def _data(rows, hidden, x_dtype=torch.bfloat16, w_dtype=torch.bfloat16, seed=0):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    x = torch.randn(rows, hidden, device=DEV, generator=gen).to(x_dtype)
    u = torch.randn(rows, hidden, device=DEV, generator=gen).to(x_dtype)
    w = (torch.rand(hidden, device=DEV, generator=gen) + 0.5).to(w_dtype)
    g = torch.randn(rows, hidden, device=DEV, generator=gen).to(x_dtype)
    return x, u, w, g


def _require_programs(hidden, **kw):
    if not is_supported(DEV, hidden, **kw):
        pytest.skip(f"no Cake program for hidden={hidden} {kw} on this GPU")


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: "+".join(c) or "default")
@pytest.mark.parametrize(("x_dtype", "w_dtype"), [(torch.bfloat16, torch.bfloat16),
                                                  (torch.bfloat16, torch.float32),
                                                  (torch.float16, torch.float32)])
@pytest.mark.parametrize("hidden", [128, 896, 2048, 2880, 4096])
@pytest.mark.parametrize("residual", [False, True])
def test_programs_match_reference(contract, x_dtype, w_dtype, hidden, residual):
    _require_programs(hidden, dtype=x_dtype, weight_dtype=w_dtype, residual=residual, **contract)
    x, u, w, g = _data(1000, hidden, x_dtype, w_dtype)
    u = u if residual else None
    outs = rmsnorm_forward(x, w, residual=u, strict=True, **contract)
    ref = rmsnorm_forward(x, w, residual=u, backend="reference", **contract)
    torch.testing.assert_close(outs[1], ref[1], rtol=2e-6, atol=0)
    ulp = 2.0**-7 if x_dtype == torch.bfloat16 else 2.0**-10
    torch.testing.assert_close(outs[0].float(), ref[0].float(), rtol=2 * ulp, atol=1e-5)
    if residual:
        assert torch.equal(outs[2], ref[2])
    normalised = outs[2] if residual else x
    gh = g.flip(0) if residual else None
    dx, dw = rmsnorm_backward(g, normalised, w, outs[1], g_residual=gh, strict=True, **contract)
    dx_ref, dw_ref = rmsnorm_backward(g, normalised, w, outs[1], g_residual=gh,
                                      backend="reference", **contract)
    torch.testing.assert_close(dx.float(), dx_ref.float(), atol=1e-2, rtol=1e-2)
    excess = ((dw.double() - dw_ref.double()).abs() / (1e-4 + 1e-4 * dw_ref.double().abs()))
    assert excess.max().item() <= 1.0


def test_strided_per_head_views_and_misaligned_copies():
    _require_programs(128)
    qkv = torch.randn(300, 3 * 8 * 128, device=DEV).to(torch.bfloat16)
    q = qkv[:, 8 * 128: 16 * 128].view(300, 8, 128)
    w = torch.rand(128, device=DEV).to(torch.bfloat16)
    y, rstd = rmsnorm_forward(q, w, strict=True)
    y_ref, rstd_ref = rmsnorm_forward(q.contiguous(), w, strict=True)
    assert torch.equal(y, y_ref) and torch.equal(rstd, rstd_ref)
    buffer = torch.randn(300, 2048 + 8, device=DEV).to(torch.bfloat16)
    shifted = buffer[:, 4:2052]  # 8-byte offset: legal but misaligned -> copied once
    _require_programs(2048)
    y, _ = rmsnorm_forward(shifted, torch.ones(2048, device=DEV, dtype=torch.bfloat16))
    y_ref, _ = rmsnorm_forward(shifted.contiguous(),
                               torch.ones(2048, device=DEV, dtype=torch.bfloat16))
    assert torch.equal(y, y_ref)


def test_deterministic_dw_across_calls_and_forced_grids():
    _require_programs(4096)
    x, _, w, g = _data(5000, 4096)
    _, rstd = rmsnorm_forward(x, w)
    plan = explain(x, w)
    if plan.backward.origin != "first_party":
        pytest.skip("grid invariance is a first-party property")
    _, dw0 = rmsnorm_backward(g, x, w, rstd)
    for _ in range(3):
        assert torch.equal(rmsnorm_backward(g, x, w, rstd)[1], dw0)
    for grid in (1, 7, 132):
        dx, dw = rmsnorm_backward(g, x, w, rstd, grid=grid)
        assert torch.equal(dw, dw0), grid


def test_compile_fullgraph_on_cuda():
    _require_programs(1024)
    norm = RMSNorm(1024, dtype=torch.bfloat16, device=DEV)
    x = torch.randn(64, 1024, device=DEV).to(torch.bfloat16).requires_grad_()
    u = torch.randn(64, 1024, device=DEV).to(torch.bfloat16)
    eager_y, eager_h = norm(x, residual=u)
    compiled = torch.compile(norm, fullgraph=True)
    y, h = compiled(x, residual=u)
    assert torch.equal(y, eager_y) and torch.equal(h, eager_h)
    (y.float().sum() + h.float().sum()).backward()
    assert x.grad is not None and norm.weight.grad is not None


@pytest.mark.parametrize("residual", [False, True])
def test_compile_reduce_overhead_replays_the_eager_bits(residual):
    # torch.compile's "reduce-overhead" mode records the forward and the backward graphs as CUDA
    # graphs (cudagraph trees, their own pool and stream) after warm-up runs: each step's
    # outputs and gradients must keep the eager bits, replay after replay.
    _require_programs(1024)
    norm = RMSNorm(1024, dtype=torch.bfloat16, device=DEV)
    x, u, _, g = _data(64, 1024, seed=5)
    u = u if residual else None

    def step(module):
        inp = x.detach().requires_grad_()
        norm.weight.grad = None
        out = module(inp, residual=u)
        y = out[0] if residual else out
        loss = (y.float() * g.float()).sum()
        if residual:
            loss = loss + out[1].float().sum()
        loss.backward()
        return y.detach().clone(), inp.grad.clone(), norm.weight.grad.clone()

    want = step(norm)
    compiled = torch.compile(norm, mode="reduce-overhead", fullgraph=True)
    for _ in range(5):  # warm-up runs, the recording, then replays
        got = step(compiled)
        torch.cuda.synchronize()
        for a, b in zip(got, want, strict=True):
            assert torch.equal(a, b)


def test_cuda_graph_capture_replays_identical_bits_without_allocating():
    _require_programs(2048)
    x, _, w, g = _data(4096, 2048)
    x.requires_grad_()
    w.requires_grad_()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):  # warm up: build, load, cache the workspace for this stream
            x.grad = w.grad = None
            rmsnorm(x, w).backward(g)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    x.grad = w.grad = None
    with torch.cuda.graph(graph):
        y = rmsnorm(x, w)
        y.backward(g)
    graph.replay()
    torch.cuda.synchronize()
    first = (y.clone(), x.grad.clone(), w.grad.clone())
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == before
    assert torch.equal(y, first[0]) and torch.equal(x.grad, first[1])
    assert torch.equal(w.grad, first[2])


@pytest.mark.parametrize("rows", [64, 4096], ids=["small-batch", "main"])
def test_graphs_captured_on_a_cold_stream_do_not_depend_on_each_other(rows):
    # torch.cuda.graph's pattern warms up on a side stream and captures on another, which has no
    # cached workspace yet. A buffer allocated inside a capture is zeroed only by that graph's
    # replay, so each captured call gets its own, zeroed by a node of its graph, and none is
    # cached or kept by a launch plan: graphs replay in any order with the eager bits.
    hidden = 2048
    _require_programs(hidden)
    x, _, w, g1 = _data(rows, hidden, seed=1)
    g2 = torch.randn_like(g1)
    _, rstd = rmsnorm_forward(x, w)
    want1 = rmsnorm_backward(g1, x, w, rstd)  # eager, on the default stream: builds and loads
    want2 = rmsnorm_backward(g2, x, w, rstd)
    nbytes = rmsnorm_workspace_bytes(hidden, DEV)
    assert nbytes > 0
    programs.clear_workspace_cache()  # torch's side streams come from a pool, maybe used before
    stream = torch.cuda.Stream()
    graphs, results = [], []
    for grad in (g1, g2):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            # Poison: a freed buffer of the workspace's size, filled at replay just before the
            # call, whose block the call's workspace may take.
            junk = torch.full((nbytes,), 255, dtype=torch.uint8, device=DEV)
            del junk
            results.append(rmsnorm_backward(grad, x, w, rstd))
        graphs.append(graph)
    assert not [key for key in programs._WORKSPACES if key[1] == stream.cuda_stream]
    for order in ((1, 0), (0, 1), (1, 1)):
        for index in order:
            graphs[index].replay()
        torch.cuda.synchronize()
        for (dx, dw), (want_dx, want_dw) in zip(results, (want1, want2), strict=True):
            assert torch.equal(dx, want_dx) and torch.equal(dw, want_dw)
    with torch.cuda.stream(stream):  # eager calls on that stream now cache a zeroed buffer
        dx, dw = rmsnorm_backward(g1, x, w, rstd)
    torch.cuda.synchronize()
    assert torch.equal(dx, want1[0]) and torch.equal(dw, want1[1])
    assert [key for key in programs._WORKSPACES if key[1] == stream.cuda_stream]


# 777 x 2048: chunks of dealt rows; 32768 x 2048 and 16400 x 8192: one 1024-thread CTA an SM,
# paced where the GPU has 132 SMs (docs/kernels.md step 107: chunks of 32 or 31 iterations, and
# of 63 or 62; the CTAs of the shorter chunks top the pacing count up); 1000 x 12288: contiguous
# chunks, the last one shorter, not paced.
@pytest.mark.parametrize(("rows", "hidden"),
                         [(777, 2048), (32768, 2048), (16400, 8192), (1000, 12288)])
def test_caller_workspace_is_reused_and_left_zeroed_counters(rows, hidden):
    _require_programs(hidden)
    x, _, w, g = _data(rows, hidden)
    _, rstd = rmsnorm_forward(x, w)
    ws = rmsnorm_workspace(hidden, DEV)
    dx0, dw0 = rmsnorm_backward(g, x, w, rstd, workspace=ws)
    dx1, dw1 = rmsnorm_backward(g, x, w, rstd, workspace=ws)
    assert torch.equal(dx0, dx1) and torch.equal(dw0, dw1)
    # The completion counters live in the workspace's last 256-byte block: the grid barrier
    # and the pacing count are left zero, as handed over.
    torch.cuda.synchronize()
    assert int(ws.view(torch.uint8)[-256:].count_nonzero()) == 0
