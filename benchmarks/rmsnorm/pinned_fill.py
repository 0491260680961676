"""A fill of a CUDA buffer whose stores carry the L2 ``evict_last`` hint (a Triton kernel).

Why the harness's L2 flush needs it (docs/kernels.md, step 64): a kernel whose loads carry
``evict_last`` (torch.compile's looped reductions do) leaves its inputs pinned in L2, and a plain
fill of any size evicts the plain lines first, so the pinned inputs survive the flush and the
next "cold" call reads them from L2. On the H200, torch.compile's forward at 64 x 2048 took 1.63
us after a plain 256 MB fill and 2.08-2.11 us after this fill (or a reset of the persisting
lines); ours and Liger, with nothing pinned before them, moved by at most 0.05 us. Stores with
the same hint compete with the pinned lines on equal terms, so 256 MiB of them evict every line
pinned before; the plain fill that follows then leaves the flush's own lines at normal priority.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

BLOCK = 4096  # int32 words a program stores


def make_pinned_fill(buffer: torch.Tensor) -> Callable[[], None] | None:
    """A launcher that zeroes ``buffer`` (CUDA, a multiple of 4 bytes) with ``evict_last``
    stores, compiled and run once here so that later calls can be captured in CUDA graphs;
    ``None`` where Triton is not installed."""
    if buffer.device.type != "cuda":
        raise ValueError(f"a pinned fill needs a CUDA buffer, got {buffer.device}")
    if buffer.numel() * buffer.element_size() % 4:
        raise ValueError("a pinned fill needs a whole number of 4-byte words")
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def pinned_zero_kernel(ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        tl.store(ptr + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs < n,
                 eviction_policy="evict_last")

    words = buffer.view(-1).view(torch.int32)
    grid = (triton.cdiv(words.numel(), BLOCK),)

    def fill() -> None:
        pinned_zero_kernel[grid](words, words.numel(), BLOCK=BLOCK)

    fill()
    return fill
