"""torch.compile(fullgraph=True) over blocks using rmsnorm: no graph break, same bits (CPU)."""

from __future__ import annotations

import pytest
import torch

from miles_ext_kernels.cake import RMSNorm, rmsnorm


class Block(torch.nn.Module):
    """Linear -> fused residual RMSNorm -> per-head Q norm, like a decoder layer's start."""

    def __init__(self, hidden=256, heads=4):
        super().__init__()
        self.proj = torch.nn.Linear(hidden, hidden, dtype=torch.bfloat16)
        self.norm = RMSNorm(hidden, dtype=torch.bfloat16)
        self.q_norm = RMSNorm(hidden // heads, dtype=torch.float32, zero_centered_gamma=True)
        self.heads = heads

    def forward(self, x, residual):
        y, h_new = self.norm(self.proj(x), residual=residual)
        q = y.view(*y.shape[:-1], self.heads, -1)
        return self.q_norm(q).flatten(-2) + h_new


def _run(model, x, u):
    for p in model.parameters():
        p.grad = None
    x.grad = u.grad = None
    out = model(x, u)
    out.float().square().mean().backward()
    return [out.detach()] + [t.grad.clone() for t in (x, u, *model.parameters())]


def _inputs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 16, 256, generator=gen).to(torch.bfloat16).requires_grad_()
    u = torch.randn(2, 16, 256, generator=gen).to(torch.bfloat16).requires_grad_()
    return x, u


def test_compile_fullgraph_aot_eager_matches_eager_bitwise():
    torch._dynamo.reset()
    model = Block()
    with torch.no_grad():
        model.q_norm.weight.normal_(0, 0.1)
    x, u = _inputs()
    eager = _run(model, x, u)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    got = _run(compiled, x, u)
    for a, b in zip(eager, got, strict=True):
        assert torch.equal(a, b)


def test_compile_counts_custom_ops_in_one_graph():
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    fn = torch.compile(lambda x, w: rmsnorm(x, w) * 2, fullgraph=True, backend=backend)
    x = torch.randn(8, 64).to(torch.bfloat16)
    w = torch.ones(64, dtype=torch.bfloat16)
    assert torch.equal(fn(x, w), rmsnorm(x, w) * 2)
    assert len(graphs) == 1
    targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert any("miles_ext_kernels.rmsnorm_fwd" in t for t in targets), targets


@pytest.mark.slow
def test_compile_fullgraph_inductor():
    torch._dynamo.reset()
    model = Block()
    x, u = _inputs()
    eager = _run(model, x, u)
    compiled = torch.compile(model, fullgraph=True)
    got = _run(compiled, x, u)
    # Inductor may fuse the surrounding ops differently; our ops' bits are the same.
    torch.testing.assert_close(got[0].float(), eager[0].float(), atol=2e-2, rtol=2e-2)
    for a, b in zip(eager[1:], got[1:], strict=True):
        torch.testing.assert_close(a.float(), b.float(), atol=5e-2, rtol=5e-2)
