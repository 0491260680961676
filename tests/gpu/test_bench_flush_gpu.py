"""The benchmark harness's L2 flush on a GPU: the evict_last fill runs, zeroes the whole buffer
and replays inside a CUDA graph (the harness captures it between calls)."""

from __future__ import annotations

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("CUDA is not available: the harness's GPU flush needs a GPU",
                allow_module_level=True)

from benchmarks.rmsnorm import timing  # noqa: E402
from benchmarks.rmsnorm.pinned_fill import make_pinned_fill  # noqa: E402


def test_cuda_flusher_takes_the_pinned_fill_and_zeroes_everything():
    pytest.importorskip("triton", reason="the pinned fill is a Triton kernel")
    flusher = timing.L2Flusher(torch.device("cuda"), (8 << 20) + 4)
    assert flusher.method == f"evict_last fill then zero_ of {(8 << 20) + 4} bytes"
    flusher.buffer.fill_(5)
    flusher()
    torch.cuda.synchronize()
    assert int(flusher.buffer.count_nonzero()) == 0


def test_pinned_fill_zeroes_every_word_in_a_cuda_graph():
    pytest.importorskip("triton", reason="the pinned fill is a Triton kernel")
    buffer = torch.empty((3 << 20) + 12, dtype=torch.uint8, device="cuda")
    fill = make_pinned_fill(buffer)
    assert fill is not None
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.cuda.graph(graph):
        fill()
    torch.cuda.current_stream().wait_stream(side)
    buffer.fill_(9)
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    assert int(buffer.count_nonzero()) == 0
    with pytest.raises(ValueError, match="4-byte words"):
        make_pinned_fill(torch.empty(6, dtype=torch.uint8, device="cuda"))
