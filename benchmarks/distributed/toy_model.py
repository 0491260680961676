"""The small language model of the two-GPU check and its seeded batches.

``embedding -> blocks [RMSNorm(residual form) -> Linear(H, H) -> GELU] -> final RMSNorm ->
linear head``. Each block's norm takes the block input ``delta`` and the residual stream and
returns the normalised activations and the new stream ``h_new = delta + stream`` (the fused
residual add); the first block's ``delta`` is zeros, so every norm uses the residual form.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from miles_ext_kernels.cake import RMSNorm


@dataclass(frozen=True)
class ModelConfig:
    """Shape, precision and numerics of the model and its batches."""

    vocab: int = 1000
    hidden: int = 1024
    layers: int = 3
    batch: int = 8
    seq: int = 128
    eps: float = 1e-6
    dtype: torch.dtype = torch.bfloat16
    backend: str | None = None
    strict: bool | None = None

    def __post_init__(self) -> None:
        for name in ("vocab", "hidden", "layers", "batch", "seq"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ModelConfig.{name} must be a positive int, got {value!r}")


class Block(nn.Module):
    """``y, stream = norm(delta, residual=stream)``; returns ``(gelu(proj(y)), stream)``."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm = RMSNorm(cfg.hidden, cfg.eps, backend=cfg.backend, strict=cfg.strict)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden)

    def forward(
        self, delta: torch.Tensor, stream: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One block on the residual stream."""
        y, stream = self.norm(delta, residual=stream)
        return F.gelu(self.proj(y)), stream


class TinyLM(nn.Module):
    """Embedding, ``cfg.layers`` residual blocks, a final RMSNorm and a linear head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.final_norm = RMSNorm(cfg.hidden, cfg.eps, backend=cfg.backend, strict=cfg.strict)
        self.head = nn.Linear(cfg.hidden, cfg.vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``[batch, seq, vocab]`` of token ids ``[batch, seq]``."""
        stream = self.embed(ids)
        delta = torch.zeros_like(stream)
        for block in self.blocks:
            delta, stream = block(delta, stream)
        y, _ = self.final_norm(delta, residual=stream)
        return self.head(y)


def build_model(cfg: ModelConfig, device: torch.device, seed: int) -> TinyLM:
    """A TinyLM initialised on the CPU from ``seed`` (same values on every device), then moved."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyLM(cfg)
    return model.to(device=device, dtype=cfg.dtype)


def norm_parameter_names(model: nn.Module) -> list[str]:
    """Names of the RMSNorm weights of ``model`` (in registration order)."""
    return [f"{name}.weight" if name else "weight" for name, module in model.named_modules()
            if isinstance(module, RMSNorm)]


def make_batch(
    cfg: ModelConfig, seed: int, step: int, stream: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and next-token targets ``[batch, seq]`` from a CPU generator.

    ``stream`` picks independent data per rank (pass the rank) or shared data (pass -1).
    """
    gen = torch.Generator().manual_seed(seed * 1_000_003 + step * 1_009 + stream + 17)
    tokens = torch.randint(cfg.vocab, (cfg.batch, cfg.seq + 1), generator=gen)
    return tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross entropy, computed in FP32."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))
