"""Megatron-Core drop-in: an RMSNorm module with ``TENorm``'s constructor.

``MegatronRMSNorm(config, hidden_size, eps)`` can replace ``TENorm`` in a layer spec
(``ModuleSpec(module=MegatronRMSNorm)``) for ``config.normalization == "RMSNorm"``. It reads
the same config fields as ``TENorm`` and follows Megatron's parameter conventions; Megatron
itself is never imported, so any object with the fields below works as ``config``:

* ``normalization``: must be ``"RMSNorm"`` (absent: assumed);
* ``layernorm_epsilon``: used when ``eps`` is not given (absent: 1e-5);
* ``layernorm_zero_centered_gamma``: weight stored as an offset from 1, initialised to 0;
* ``sequence_parallel``: copied to ``weight.sequence_parallel`` (Megatron all-reduces the
  gradients of weights so marked across the tensor-parallel group);
* ``params_dtype``: the weight's dtype (absent: FP32);
* ``gradient_accumulation_fusion``: the FP32 weight gradient is accumulated straight into
  ``weight.main_grad`` (allocated by Megatron's DDP) and ``weight.grad_added_to_main_grad`` is set,
  as Transformer Engine does;
* ``use_cpu_initialization`` / ``init_model_with_meta_device``: where the weight is created
  (else the current CUDA device, or the CPU when CUDA is unavailable).
"""

from __future__ import annotations

import math

import torch

from miles_ext_kernels.cake import rmsnorm
from miles_ext_kernels.cake.module import RMSNorm
from miles_ext_kernels.cake.ops.rmsnorm import W_DTYPES

__all__ = ["MegatronRMSNorm"]


def _config_flag(config: object, name: str) -> bool:
    """A boolean field of ``config``; False when absent."""
    value = getattr(config, name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise TypeError(f"config.{name}: expected a bool, got {type(value).__name__} {value!r}")
    return value


def _resolve_eps(config: object, eps: float | None) -> float:
    """``eps`` if given, else ``config.layernorm_epsilon`` (else 1e-5), checked positive."""
    source = "eps"
    if eps is None:
        eps, source = getattr(config, "layernorm_epsilon", 1e-5), "config.layernorm_epsilon"
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"{source}: expected a float, got {type(eps).__name__} {eps!r}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"{source}: expected a finite positive float, got {eps!r}")
    return float(eps)


def _resolve_dtype(config: object) -> torch.dtype:
    """``config.params_dtype`` (FP32 when absent), a weight dtype ``rmsnorm`` takes."""
    dtype = getattr(config, "params_dtype", None) or torch.float32
    if dtype not in W_DTYPES:
        raise ValueError(
            f"config.params_dtype: rmsnorm takes weights of {', '.join(map(str, W_DTYPES))}, "
            f"got {dtype!r}"
        )
    return dtype


def _resolve_device(config: object) -> torch.device:
    """Where Megatron would create the weight for this config."""
    if _config_flag(config, "use_cpu_initialization"):
        return torch.device("cpu")
    if _config_flag(config, "init_model_with_meta_device"):
        return torch.device("meta")
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _check_normalization(config: object) -> None:
    """Refuse a config that asks for anything but RMSNorm."""
    normalization = getattr(config, "normalization", "RMSNorm")
    if normalization != "RMSNorm":
        raise ValueError(
            f"config.normalization: MegatronRMSNorm implements 'RMSNorm' only, got "
            f"{normalization!r}; use TENorm or Megatron's own norm for it"
        )


class MegatronRMSNorm(RMSNorm):
    """RMSNorm with Transformer Engine ``TENorm``'s constructor and Megatron conventions.

    ``forward(hidden_states)`` normalises the last dimension (``[s, b, h]`` or per-head
    ``[s, b, heads, d]``) and returns a tensor of the input's dtype, rounded once:
    ``y = cast((x * r) * w)`` (or ``(1 + w)`` with ``layernorm_zero_centered_gamma``), as
    TE's RMSNorm rounds. ``forward(hidden_states, residual)`` fuses the residual add and
    returns ``(y, h_new)`` with ``h_new = hidden_states + residual``.
    """

    def __init__(
        self,
        config: object,
        hidden_size: int,
        eps: float | None = None,
        *,
        deterministic: bool = True,
        backend: str | None = None,
        strict: bool | None = None,
    ) -> None:
        """Build the norm from a Megatron ``TransformerConfig`` (or any object with its fields).

        ``eps`` defaults to ``config.layernorm_epsilon``; ``deterministic``, ``backend`` and
        ``strict`` are passed to :func:`miles_ext_kernels.cake.rmsnorm`.
        """
        if config is None:
            raise TypeError("config: expected a Megatron TransformerConfig-like object, got None")
        _check_normalization(config)
        if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size: expected a positive int, got {hidden_size!r}")
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic: expected a bool, got {type(deterministic).__name__}")
        if strict is not None and not isinstance(strict, bool):
            raise TypeError(f"strict: expected a bool or None, got {type(strict).__name__}")
        super().__init__(
            hidden_size,
            _resolve_eps(config, eps),
            zero_centered_gamma=_config_flag(config, "layernorm_zero_centered_gamma"),
            deterministic=deterministic,
            dtype=_resolve_dtype(config),
            device=_resolve_device(config),
            backend=backend,
            strict=strict,
        )
        self.config = config
        self.sequence_parallel = _config_flag(config, "sequence_parallel")
        self.gradient_accumulation_fusion = _config_flag(config, "gradient_accumulation_fusion")
        self.weight.sequence_parallel = self.sequence_parallel

    def forward(
        self, hidden_states: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Normalise ``hidden_states`` (plus ``residual`` when given) over the last dimension."""
        fuse = self.gradient_accumulation_fusion and self.weight.requires_grad
        if fuse and torch.is_grad_enabled() and not hasattr(self.weight, "main_grad"):
            raise RuntimeError(
                "MegatronRMSNorm: config.gradient_accumulation_fusion is set but weight.main_grad "
                "is missing; wrap the model in Megatron's DistributedDataParallel (which "
                "allocates it) or disable gradient_accumulation_fusion"
            )
        return rmsnorm(
            hidden_states,
            self.weight,
            self.eps,
            residual=residual,
            deterministic=self.deterministic,
            zero_centered_gamma=self.zero_centered_gamma,
            weight_grad="main_grad" if fuse else "param",
            backend=self.backend,
            strict=self.strict,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.hidden_size}, eps={self.eps}, zero_centered_gamma={self.zero_centered_gamma}, "
            f"sequence_parallel={self.sequence_parallel}, "
            f"gradient_accumulation_fusion={self.gradient_accumulation_fusion}"
        )
