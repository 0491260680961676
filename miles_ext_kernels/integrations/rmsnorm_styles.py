"""Rounding contracts of third-party RMSNorm modules, keyed by class name.

Each contract names how a module rounds ``y`` (the names match the ``CallSpec`` vocabulary):

* ``"cast_before_weight_mul"`` (Llama style): ``y = w * cast(x * r, x.dtype)``; the result has
  the promoted dtype of ``w`` and ``x``.
* ``"zero_centered_gamma"`` (Gemma, Qwen3-Next style): the weight is stored as an offset from 1,
  ``y = cast((x * r) * (1 + float32(w)), x.dtype)`` with one final rounding.
* ``"default"`` (OLMo-2, GPT-OSS style): ``y = cast((x * r) * w, x.dtype)`` with one final
  rounding.

Classes are recognised by name so that this module never imports transformers.
"""

from __future__ import annotations

from collections.abc import Mapping

CAST_BEFORE_WEIGHT_MUL = "cast_before_weight_mul"
ZERO_CENTERED_GAMMA = "zero_centered_gamma"
DEFAULT = "default"
CONTRACTS = (CAST_BEFORE_WEIGHT_MUL, ZERO_CENTERED_GAMMA, DEFAULT)

_LLAMA_STYLE = (
    "LlamaRMSNorm",
    "Llama4TextRMSNorm",
    "MistralRMSNorm",
    "Mistral3RMSNorm",
    "MixtralRMSNorm",
    "MinistralRMSNorm",
    "Qwen2RMSNorm",
    "Qwen2MoeRMSNorm",
    "Qwen2VLRMSNorm",
    "Qwen2_5_VLRMSNorm",
    "Qwen3RMSNorm",
    "Qwen3MoeRMSNorm",
    "Qwen3VLTextRMSNorm",
    "Qwen3VLMoeTextRMSNorm",
    "Phi3RMSNorm",
    "DeepseekV2RMSNorm",
    "DeepseekV3RMSNorm",
    "GlmRMSNorm",
    "Glm4RMSNorm",
    "Glm4MoeRMSNorm",
    "GraniteRMSNorm",
    "GraniteMoeRMSNorm",
    "OlmoeRMSNorm",
    "SmolLM3RMSNorm",
    "Ernie4_5RMSNorm",
    "Ernie4_5_MoeRMSNorm",
    "HunYuanDenseV1RMSNorm",
    "HunYuanMoEV1RMSNorm",
    "SeedOssRMSNorm",
    "MiniMaxRMSNorm",
    "MiniMaxM2RMSNorm",
    "Exaone4RMSNorm",
    "ApertusRMSNorm",
    "ArceeRMSNorm",
    "Dots1RMSNorm",
)

_OFFSET_STYLE = (
    "GemmaRMSNorm",
    "Gemma2RMSNorm",
    "Gemma3RMSNorm",
    "VaultGemmaRMSNorm",
    "T5GemmaRMSNorm",
    "Qwen3NextRMSNorm",
    "Qwen3_5RMSNorm",
    "Qwen3_5MoeRMSNorm",
)

_SINGLE_ROUNDING_STYLE = (
    "Olmo2RMSNorm",
    "Olmo3RMSNorm",
    "FlexOlmoRMSNorm",
    "GptOssRMSNorm",
    "HeliumRMSNorm",
)

KNOWN_CLASSES: Mapping[str, str] = {
    **dict.fromkeys(_LLAMA_STYLE, CAST_BEFORE_WEIGHT_MUL),
    **dict.fromkeys(_OFFSET_STYLE, ZERO_CENTERED_GAMMA),
    **dict.fromkeys(_SINGLE_ROUNDING_STYLE, DEFAULT),
}


def _class_name(entry: object, argument: str) -> str:
    """Return the class name an entry of ``classes`` designates (a name or a class)."""
    if isinstance(entry, str) and entry:
        return entry
    if isinstance(entry, type):
        return entry.__name__
    raise TypeError(
        f"{argument}: expected a class or a class name, got {type(entry).__name__} {entry!r}"
    )


def resolve_contracts(classes: Mapping[str | type, str] | None) -> dict[str, str]:
    """Return ``{class name: contract}``: the built-in table, extended / overridden by ``classes``.

    ``classes`` maps a class (or its ``__name__``) to one of :data:`CONTRACTS`.
    """
    contracts = dict(KNOWN_CLASSES)
    if classes is None:
        return contracts
    if not isinstance(classes, Mapping):
        raise TypeError(
            "classes: expected a mapping from an RMSNorm class (or its name) to a rounding "
            f"contract such as {{'MyRMSNorm': 'cast_before_weight_mul'}}, got "
            f"{type(classes).__name__}; contracts: {', '.join(CONTRACTS)}"
        )
    for entry, contract in classes.items():
        name = _class_name(entry, "classes")
        if contract not in CONTRACTS:
            raise ValueError(
                f"classes[{name!r}]: unknown rounding contract {contract!r}; "
                f"expected one of {', '.join(CONTRACTS)}"
            )
        contracts[name] = contract
    return contracts
