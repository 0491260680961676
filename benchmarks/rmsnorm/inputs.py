"""Input tensors for one benchmark case: several independent sets, rotated during timing."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from benchmarks.rmsnorm.shapes import Case

TORCH_DTYPES: dict[str, torch.dtype] = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp32": torch.float32,
}


@dataclass
class InputSet:
    """One call's inputs: ``x`` (possibly a strided per-head view), weight, upstream grads.

    ``u`` / ``g_h`` (the residual and the gradient flowing into ``h_new``) exist only for the
    residual family.
    """

    x: torch.Tensor
    w: torch.Tensor
    g: torch.Tensor
    u: torch.Tensor | None = None
    g_h: torch.Tensor | None = None

    def with_private_grads(self) -> InputSet:
        """A copy whose ``g`` / ``g_h`` are fresh clones (for candidates that overwrite them)."""
        return replace(self, g=self.g.clone(),
                       g_h=self.g_h.clone() if self.g_h is not None else None)


def x_shape(case: Case) -> tuple[int, ...]:
    """The logical shape of ``x``: ``[T, H]`` or ``[T, heads, D]``."""
    if case.per_head:
        return (case.tokens, case.heads, case.hidden)
    return (case.tokens, case.hidden)


def _activation(case: Case, shape: tuple[int, ...], device: torch.device,
                gen: torch.Generator) -> torch.Tensor:
    dtype = TORCH_DTYPES[case.x_dtype]
    return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)


def make_input_set(case: Case, device: torch.device | str, seed: int) -> InputSet:
    """One random input set for ``case`` on ``device`` (deterministic in ``seed``)."""
    device = torch.device(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    if case.family == "per_head_strided":
        base = _activation(case, (case.tokens, case.row_heads, case.hidden), device, gen)
        x = base[:, : case.heads, :]
    else:
        x = _activation(case, x_shape(case), device, gen)
    w32 = 1.0 + 0.25 * torch.randn((case.hidden,), generator=gen, device=device)
    w = w32.to(TORCH_DTYPES[case.w_dtype])
    g = _activation(case, x_shape(case), device, gen)
    u = g_h = None
    if case.residual:
        u = _activation(case, x_shape(case), device, gen)
        g_h = _activation(case, x_shape(case), device, gen)
    return InputSet(x=x, w=w, g=g, u=u, g_h=g_h)


def make_input_sets(case: Case, device: torch.device | str, seed: int,
                    count: int) -> list[InputSet]:
    """``count`` independent input sets (seeds ``seed``, ``seed + 1``, ...)."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    return [make_input_set(case, device, seed + index) for index in range(count)]


def input_set_count(case: Case, device: torch.device | str, requested: int | None = None) -> int:
    """How many sets to rotate: ``requested`` if given, else 3 (2 above 256 MiB of x)."""
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--input-sets must be >= 1, got {requested}")
        return requested
    if torch.device(device).type != "cuda":
        return 2
    x_bytes = case.rows * case.hidden * 2
    return 2 if x_bytes > (256 << 20) else 3
