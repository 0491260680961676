"""Hugging Face drop-in: route the forward of a model's RMSNorm modules through ``rmsnorm``.

``patch_rmsnorm(model)`` replaces the bound ``forward`` of every recognised RMSNorm module (see
:mod:`miles_ext_kernels.integrations.rmsnorm_styles`) with one that calls
:func:`miles_ext_kernels.cake.rmsnorm` under the class's own rounding contract. Parameters,
buffers and ``state_dict`` keys are untouched: only an instance attribute ``forward`` is set,
and ``unpatch_rmsnorm`` / ``PatchHandle.remove`` delete it again.

transformers is never imported here; modules are recognised by class name.
"""

from __future__ import annotations

import inspect
import logging
import types
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import torch
from torch import nn

from miles_ext_kernels.cake import RMSNormUnsupportedError, rmsnorm
from miles_ext_kernels.cake.dispatch import resolve_backend, resolve_strict
from miles_ext_kernels.cake.ops.rmsnorm import W_DTYPES, X_DTYPES
from miles_ext_kernels.integrations.rmsnorm_styles import (
    CAST_BEFORE_WEIGHT_MUL,
    ZERO_CENTERED_GAMMA,
    resolve_contracts,
)

__all__ = ["PatchHandle", "patch_rmsnorm", "unpatch_rmsnorm", "patched_modules"]

logger = logging.getLogger(__name__)

_EPS_ATTRIBUTES = ("variance_epsilon", "eps", "epsilon")
_OPTIONS_ATTRIBUTE = "_miles_ext_kernels_rmsnorm_patch"
_logged_fallbacks: set[tuple[str, str]] = set()


def _module_eps(module: nn.Module) -> float:
    """The epsilon an RMSNorm module stores (``variance_epsilon``, ``eps`` or ``epsilon``)."""
    for attribute in _EPS_ATTRIBUTES:
        value = getattr(module, attribute, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    raise ValueError(
        f"{type(module).__name__}: no numeric epsilon attribute "
        f"(looked for {', '.join(_EPS_ATTRIBUTES)})"
    )


def _module_weight(module: nn.Module) -> torch.Tensor | None:
    """The module's 1-D weight tensor, or None when it has none (weightless norms)."""
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.dim() == 1:
        return weight
    return None


def _unsupported_reason(contract: str, x: torch.Tensor, w: torch.Tensor) -> str | None:
    """Why ``rmsnorm`` cannot reproduce this module's output dtype, or None when it can."""
    if x.dtype not in X_DTYPES:
        return f"rmsnorm does not take {x.dtype} inputs"
    if w.dtype not in W_DTYPES:
        return f"rmsnorm does not take {w.dtype} weights"
    if contract == CAST_BEFORE_WEIGHT_MUL:
        out_dtype = torch.promote_types(w.dtype, x.dtype)
        if out_dtype != x.dtype:
            return (
                f"the original returns {out_dtype} for a {w.dtype} weight and a {x.dtype} "
                "input, while rmsnorm returns the input dtype"
            )
    return None


@dataclass(frozen=True)
class _PatchOptions:
    """What one patched module's forward does; stored on the forward function itself."""

    contract: str
    deterministic: bool
    backend: str | None
    strict: bool | None
    # The instance-level forward we replaced, or None when the class's forward was in use.
    original: object | None
    # The name of the original forward's input parameter (None: it is positional-only).
    input_name: str | None = "hidden_states"

    def call_original(self, module: nn.Module, hidden_states: torch.Tensor) -> torch.Tensor:
        """Run the forward the module had before it was patched."""
        if self.original is not None:
            return self.original(hidden_states)
        return type(module).forward(module, hidden_states)


def _cake_forward(
    module: nn.Module, hidden_states: torch.Tensor, options: _PatchOptions
) -> torch.Tensor:
    """The patched forward: ``rmsnorm`` under the module's contract, else the original."""
    weight = _module_weight(module)
    if weight is None:
        raise ValueError(f"{type(module).__name__}: the patched module has no 1-D weight")
    reason = _unsupported_reason(options.contract, hidden_states, weight)
    if reason is not None:
        name = type(module).__name__
        if resolve_strict(options.strict):
            raise RMSNormUnsupportedError(
                f"{name}: rmsnorm cannot replace this forward (strict mode): {reason}"
            )
        if (name, reason) not in _logged_fallbacks:
            _logged_fallbacks.add((name, reason))
            logger.warning("%s: using the original forward because %s", name, reason)
        return options.call_original(module, hidden_states)
    return rmsnorm(
        hidden_states,
        weight,
        _module_eps(module),
        deterministic=options.deterministic,
        zero_centered_gamma=options.contract == ZERO_CENTERED_GAMMA,
        cast_before_weight_mul=options.contract == CAST_BEFORE_WEIGHT_MUL,
        backend=options.backend,
        strict=options.strict,
    )


def _bound_input(
    module: nn.Module, options: _PatchOptions, args: tuple[object, ...], kwargs: dict[str, object]
) -> torch.Tensor:
    """The input of a patched forward call, passed by position or by the original's name."""
    if len(args) == 1 and not kwargs:
        return args[0]  # type: ignore[return-value]
    if not args and len(kwargs) == 1 and options.input_name in kwargs:
        return kwargs[options.input_name]  # type: ignore[return-value]
    name = options.input_name or "the input, by position"
    raise TypeError(
        f"{type(module).__name__}.forward (patched by miles_ext_kernels) takes one argument, "
        f"{name}; got {len(args)} positional and keywords {sorted(kwargs)}"
    )


def _make_forward(options: _PatchOptions, signature: inspect.Signature) -> types.FunctionType:
    """A plain function (so torch.compile can trace it) carrying its options as an attribute.

    It takes the input by position or by the original forward's parameter name (Gemma's
    ``x=``), and reports the original's ``signature`` (with ``self``) to ``inspect``.
    """

    def forward(self: nn.Module, *args: object, **kwargs: object) -> torch.Tensor:
        return _cake_forward(self, _bound_input(self, options, args, kwargs), options)

    forward.__doc__ = f"RMSNorm forward routed through miles_ext_kernels ({options.contract})."
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    forward.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()]
    )
    setattr(forward, _OPTIONS_ATTRIBUTE, options)
    return forward


def _forward_signature(module: nn.Module, original: object | None) -> inspect.Signature:
    """The signature of the forward a patch replaces (without ``self``).

    Raises ``ValueError`` saying why when it is not ``forward(input)``: a patched forward that
    dropped or refused the other arguments would change what the module does.
    """
    forward = original if original is not None else types.MethodType(type(module).forward, module)
    try:
        signature = inspect.signature(forward)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise ValueError(f"its forward's signature cannot be read ({error})") from None
    parameters = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) != 1 or parameters[0].kind not in positional:
        raise ValueError(
            f"its forward{signature} takes other parameters than the input, which the patched "
            "forward(input) would not honour"
        )
    return signature


def _input_name(signature: inspect.Signature) -> str | None:
    """The input's parameter name, or None when it can only be passed by position."""
    (parameter,) = signature.parameters.values()
    if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
        return None
    return parameter.name


def _refuse_forward(module: nn.Module, reason: str, strict: bool | None, warned: set[str]) -> None:
    """Raise (strict) or log once per class that ``module``'s forward is left unpatched."""
    name = type(module).__name__
    message = f"{name}: patch_rmsnorm leaves this module's forward as it is: {reason}"
    if resolve_strict(strict):
        raise RMSNormUnsupportedError(f"{message} (strict mode)")
    if name not in warned:
        warned.add(name)
        logger.warning("%s", message)


def _installed_options(module: nn.Module) -> _PatchOptions | None:
    """The options of the forward patched onto ``module``, or None when it is not patched."""
    forward = module.__dict__.get("forward")
    if isinstance(forward, types.MethodType):
        options = getattr(forward.__func__, _OPTIONS_ATTRIBUTE, None)
        if isinstance(options, _PatchOptions):
            return options
    return None


def _restore(module: nn.Module) -> bool:
    """Put back the module's original forward; True when it was patched."""
    installed = _installed_options(module)
    if installed is None:
        return False
    if installed.original is None:
        del module.__dict__["forward"]
    else:
        module.__dict__["forward"] = installed.original
    return True


@dataclass
class PatchHandle:
    """The modules one ``patch_rmsnorm`` call patched; ``remove()`` restores their forwards.

    Usable as a context manager: ``with patch_rmsnorm(model): ...`` unpatches on exit.
    """

    _modules: list[weakref.ReferenceType[nn.Module]] = field(default_factory=list)

    @property
    def modules(self) -> list[nn.Module]:
        """The patched modules that are still alive."""
        return [module for ref in self._modules if (module := ref()) is not None]

    def __len__(self) -> int:
        return len(self.modules)

    def remove(self) -> int:
        """Restore the original forward of every module this handle patched; returns the count.

        Modules already unpatched (by ``unpatch_rmsnorm`` or another handle) are skipped.
        """
        restored = sum(_restore(module) for module in self.modules)
        self._modules.clear()
        return restored

    def __enter__(self) -> PatchHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


def _check_options(model: object, deterministic: object, backend: object, strict: object) -> None:
    """Raise a clear error for a bad argument of ``patch_rmsnorm``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic: expected a bool, got {type(deterministic).__name__}")
    if backend is not None:
        if not isinstance(backend, str):
            raise TypeError(
                f"backend: expected a backend name or None, got {type(backend).__name__}"
            )
        resolve_backend(backend)
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(f"strict: expected a bool or None, got {type(strict).__name__}")


def patch_rmsnorm(
    model: nn.Module,
    classes: Mapping[str | type, str] | None = None,
    *,
    deterministic: bool = True,
    backend: str | None = None,
    strict: bool | None = None,
) -> PatchHandle:
    """Route the forward of every recognised RMSNorm module in ``model`` through ``rmsnorm``.

    Args:
        model: any ``nn.Module`` (a transformers model, a layer, or a norm itself).
        classes: extra or overriding ``{class or class name: contract}`` entries, contract one of
            ``"cast_before_weight_mul"`` (Llama: ``w * cast(x * r)``), ``"zero_centered_gamma"``
            (Gemma / Qwen3-Next: ``cast((x * r) * (1 + w))``) or ``"default"``
            (``cast((x * r) * w)``). Built-in classes are listed in ``rmsnorm_styles``.
        deterministic: passed to ``rmsnorm`` (bitwise reproducible weight gradients).
        backend: force a backend (``rmsnorm``'s ``backend=``); None lets it dispatch.
        strict: raise instead of falling back (None: ``$MILES_EXT_KERNELS_STRICT``), both in
            ``rmsnorm`` and here: when ``rmsnorm`` cannot reproduce a call's dtypes (FP64, or a
            Llama-style FP32 weight with a BF16 input, whose original returns FP32)
            the original forward runs and a warning is logged once per class and reason, or
            ``RMSNormUnsupportedError`` is raised in strict mode.

    Returns:
        A :class:`PatchHandle`; ``handle.remove()`` restores the original forwards.

    Patching an already patched module only updates its options; the original forward is kept,
    so one ``unpatch_rmsnorm`` always restores it. Modules are matched by exact class name.
    The patched forward takes the input by position or by the original forward's parameter name
    (``norm(x=...)`` for Gemma). A module whose forward takes other parameters than the input
    (``forward(x, gate=None)``) is left unpatched with a warning, as patching it would drop or
    refuse those arguments; in strict mode ``RMSNormUnsupportedError`` is raised instead, before
    anything is patched.
    """
    _check_options(model, deterministic, backend, strict)
    contracts = resolve_contracts(classes)
    targets: list[tuple[nn.Module, str, object | None, inspect.Signature]] = []
    refused: set[str] = set()
    for module in model.modules():
        contract = contracts.get(type(module).__name__)
        if contract is None or _module_weight(module) is None:
            continue
        _module_eps(module)  # fail before patching anything, not at the first forward
        installed = _installed_options(module)
        original = installed.original if installed is not None else module.__dict__.get("forward")
        try:
            signature = _forward_signature(module, original)
        except ValueError as error:
            _refuse_forward(module, str(error), strict, refused)
            continue
        targets.append((module, contract, original, signature))
    handle = PatchHandle()
    for module, contract, original, signature in targets:
        options = _PatchOptions(contract, deterministic, backend, strict, original,
                                _input_name(signature))
        module.__dict__["forward"] = types.MethodType(_make_forward(options, signature), module)
        handle._modules.append(weakref.ref(module))
    if not handle._modules and not refused:
        logger.warning(
            "patch_rmsnorm: no RMSNorm module of a known class in %s; pass classes= to name yours",
            type(model).__name__,
        )
    return handle


def unpatch_rmsnorm(model: nn.Module) -> int:
    """Restore the original forward of every patched module in ``model``; returns the count."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    return sum(_restore(module) for module in model.modules())


def patched_modules(model: nn.Module) -> Iterator[tuple[str, nn.Module, str]]:
    """Yield ``(qualified name, module, contract)`` for every patched module in ``model``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    for name, module in model.named_modules():
        installed = _installed_options(module)
        if installed is not None:
            yield name, module, installed.contract
