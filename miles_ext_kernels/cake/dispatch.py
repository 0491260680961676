"""Choose the backend of one RMSNorm call: vendored program, first-party program or reference.

Order for ``backend='auto'``: a vendored upstream program when one covers (arch, hidden,
kind, residual, dtypes, contract, rows); else the first-party package; else the PyTorch
reference backend. ``backend=`` (or ``$MILES_EXT_KERNELS_RMSNORM_BACKEND``) forces one.
Strict mode (``strict=True`` or ``$MILES_EXT_KERNELS_STRICT=1``) raises
:class:`RMSNormUnsupportedError` where the call would otherwise fall back (to the reference
backend, or away from a forced backend). Each distinct fallback is logged once on the
``miles_ext_kernels`` logger.

A vendored op that cannot be loaded (or an unreadable VENDORED.json) is skipped with one warning
and the call goes on with the first-party package or the reference backend; strict mode under
``backend='auto'`` and ``backend='vendored'`` raise :class:`VendoredPackageError` instead.

Two hooks make the choice testable without a GPU: :func:`set_device_info_provider` replaces the
capability / SM-count lookup and :func:`set_package_provider` the package discovery
(:func:`override` does both for a ``with`` block).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from miles_ext_kernels.cake.packages.base import CakePackageError, VendoredPackageError
from miles_ext_kernels.cake.packages.records import CallSpec, ModuleRecord, RecordError

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "STRICT_ENV",
    "OP",
    "DeviceInfo",
    "Route",
    "Decision",
    "RMSNormUnsupportedError",
    "DeviceUnavailableError",
    "VendoredPackageError",
    "decide",
    "device_info",
    "resolve_backend",
    "normalize_backend",
    "resolve_strict",
    "set_device_info_provider",
    "set_package_provider",
    "override",
    "dtype_name",
    "make_call",
    "explain",
    "is_supported",
    "Explanation",
    "PlanExplanation",
    "clear_caches",
    "on_clear_caches",
]

BACKENDS: tuple[str, ...] = ("auto", "vendored", "first_party", "reference")
PROGRAM_BACKENDS: tuple[str, ...] = ("vendored", "first_party")
BACKEND_ENV = "MILES_EXT_KERNELS_RMSNORM_BACKEND"
STRICT_ENV = "MILES_EXT_KERNELS_STRICT"
OP = "rmsnorm"
LOGGER = logging.getLogger("miles_ext_kernels")

_DTYPE_NAMES = {
    torch.bfloat16: "bfloat16",
    torch.float16: "float16",
    torch.float32: "float32",
}


class RMSNormUnsupportedError(ValueError):
    """Strict mode: no program backend serves the call (or the forced backend cannot)."""


class DeviceUnavailableError(ValueError):
    """The device named by a call does not exist here (no CUDA in this torch, no such GPU)."""


@dataclass(frozen=True)
class DeviceInfo:
    """What the dispatcher needs of a device: its type, capability and SM count."""

    device: torch.device
    capability: tuple[int, int] | None = None
    sm_count: int | None = None

    @property
    def is_cuda(self) -> bool:
        """True for a GPU with a known capability (a test provider may fake one on CPU)."""
        return self.capability is not None


@dataclass(frozen=True)
class Route:
    """The programs of one package that serve one call."""

    package: Any
    arch: str
    kind: str
    modules: tuple[ModuleRecord, ...]
    workspace_module: ModuleRecord | None = None

    @property
    def origin(self) -> str:
        """``vendored`` or ``first_party``."""
        return str(self.package.origin)


@dataclass(frozen=True)
class Decision:
    """The backend chosen for one call and why the others were not."""

    backend: str
    device: DeviceInfo
    call: CallSpec
    rows: int | None
    requested: str
    strict: bool
    route: Route | None = None
    rejected: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def fallback(self) -> bool:
        """True when the chosen backend is not the one asked for (or reference under auto)."""
        if self.requested == "auto":
            return self.backend == "reference"
        return self.backend != self.requested


# ----------------------------------------------------------------------------- hooks

_lock = threading.Lock()
_device_info_provider: Callable[[torch.device], DeviceInfo] | None = None
_package_provider: Callable[[], Sequence[Any]] | None = None
_logged: set[tuple[str, str]] = set()


def set_device_info_provider(
    provider: Callable[[torch.device], DeviceInfo] | None,
) -> Callable[[torch.device], DeviceInfo] | None:
    """Replace the capability / SM-count lookup (None restores the real one); returns the old."""
    global _device_info_provider
    with _lock:
        previous, _device_info_provider = _device_info_provider, provider
    _clear_caches()
    return previous


def set_package_provider(
    provider: Callable[[], Sequence[Any]] | None,
) -> Callable[[], Sequence[Any]] | None:
    """Replace package discovery (None restores the installed packages); returns the old one."""
    global _package_provider
    with _lock:
        previous, _package_provider = _package_provider, provider
    _clear_caches()
    return previous


@contextmanager
def override(
    *,
    device_info: Callable[[torch.device], DeviceInfo] | None = None,
    packages: Callable[[], Sequence[Any]] | Sequence[Any] | None = None,
) -> Iterator[None]:
    """Fake the device and/or the package set inside a ``with`` block (tests, CPU dry runs)."""
    provider = packages
    if packages is not None and not callable(packages):
        fixed = tuple(packages)

        def provider() -> Sequence[Any]:
            return fixed

    old_info = set_device_info_provider(device_info) if device_info is not None else None
    old_packages = set_package_provider(provider) if provider is not None else None
    try:
        yield
    finally:
        if device_info is not None:
            set_device_info_provider(old_info)
        if provider is not None:
            set_package_provider(old_packages)


def clear_caches() -> None:
    """Forget cached decisions and logged fallbacks (after re-vendoring, in tests)."""
    _clear_caches()


_clear_hooks: list[Callable[[], None]] = []


def on_clear_caches(hook: Callable[[], None]) -> None:
    """Call ``hook`` whenever the decisions are forgotten (caches derived from them)."""
    with _lock:
        if hook not in _clear_hooks:
            _clear_hooks.append(hook)


def _clear_caches() -> None:
    _cached_decision.cache_clear()
    with _lock:
        _logged.clear()
        hooks = list(_clear_hooks)
    for hook in hooks:
        hook()


@functools.cache
def _cuda_properties(index: int) -> tuple[tuple[int, int], int]:
    props = torch.cuda.get_device_properties(index)
    return (int(props.major), int(props.minor)), int(props.multi_processor_count)


def device_info(device: torch.device | str) -> DeviceInfo:
    """Capability and SM count of ``device`` (cached per CUDA device; injectable)."""
    device = torch.device(device)
    provider = _device_info_provider
    if provider is not None:
        return provider(device)
    if device.type != "cuda":
        return DeviceInfo(device=device)
    try:
        index = device.index if device.index is not None else torch.cuda.current_device()
        capability, sm_count = _cuda_properties(index)
    except (AssertionError, RuntimeError) as exc:  # torch's "not compiled with CUDA" etc.
        raise DeviceUnavailableError(_cuda_unavailable(device, exc)) from exc
    return DeviceInfo(device=torch.device("cuda", index), capability=capability,
                      sm_count=sm_count)


def _cuda_unavailable(device: torch.device, exc: BaseException) -> str:
    """Why the CUDA ``device`` cannot be used, and what to do."""
    if not torch.cuda.is_available():
        why = ("this torch build has no CUDA support" if torch.version.cuda is None
               else "no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)")
        return (f"device {str(device)!r} is not available: {why}; pass a CPU device, or run on "
                "a GPU machine with a CUDA build of torch")
    return (f"device {str(device)!r} is not available: torch sees "
            f"{torch.cuda.device_count()} CUDA device(s) ({exc})")


def _installed_packages(requested: str, strict: bool) -> tuple[Any, ...]:
    """The packages the dispatcher may route to; broken vendored ops are reported, then
    skipped (or raised: :func:`_vendored_problem`)."""
    provider = _package_provider
    if provider is not None:
        return tuple(provider())
    from miles_ext_kernels.cake import packages as package_registry

    found = package_registry.discover()
    for problem in found.problems:
        _vendored_problem(problem, requested, strict)
    return found.packages


def _vendored_problem(problem: Any, requested: str, strict: bool) -> None:
    """Raise a vendored ``problem`` of this op where the request depends on vendored programs
    (``backend='vendored'``, or strict mode under ``auto``); else warn once."""
    relevant = problem.op in (None, OP)
    if relevant and (requested == "vendored" or (strict and requested == "auto")):
        raise problem.as_error() from problem.error
    _log_once(logging.WARNING,
              f"miles_ext_kernels: skipping a vendored package: {problem.message} (set "
              f"{STRICT_ENV}=1 to make this an error)", ("vendored-problem", problem.message))


def dtype_name(dtype: torch.dtype) -> str:
    """The CallSpec name of a torch dtype (``bfloat16``, ``float16``, ``float32``)."""
    try:
        return _DTYPE_NAMES[dtype]
    except KeyError:
        raise TypeError(f"dtype {dtype} is not one of {sorted(_DTYPE_NAMES.values())}") from None


# ----------------------------------------------------------------------------- choices


def normalize_backend(value: object) -> str | None:
    """``value`` as a backend name (case and surrounding blanks ignored: ``" Reference"`` is
    ``reference``), or None when it is not a string naming one of :data:`BACKENDS`."""
    if not isinstance(value, str):
        return None
    name = value.strip().lower()
    return name if name in BACKENDS else None


def resolve_backend(backend: str | None) -> str:
    """The requested backend: the argument, else ``$MILES_EXT_KERNELS_RMSNORM_BACKEND``, else
    ``auto``. Both accept the spellings of :func:`normalize_backend`."""
    if backend is None:
        env = os.environ.get(BACKEND_ENV, "")
        if not env.strip():
            return "auto"
        name = normalize_backend(env)
        if name is None:
            raise ValueError(f"${BACKEND_ENV}={env!r} is not one of {BACKENDS}")
        return name
    name = normalize_backend(backend)
    if name is None:
        raise ValueError(f"backend must be one of {BACKENDS} or None, got {backend!r}")
    return name


def resolve_strict(strict: bool | None) -> bool:
    """Strict mode: the argument, else ``$MILES_EXT_KERNELS_STRICT`` (1/true/yes/on)."""
    if strict is None:
        env = os.environ.get(STRICT_ENV, "").strip().lower()
        if env in ("", "0", "false", "no", "off"):
            return False
        if env in ("1", "true", "yes", "on"):
            return True
        raise ValueError(f"${STRICT_ENV}={env!r} is not a boolean (use 1 or 0)")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool or None, got {type(strict).__name__}")
    return strict


def _kinds(kind: str, deterministic: bool) -> tuple[str, ...]:
    if kind == "fwd":
        return ("fwd",)
    return ("bwd",) if deterministic else ("bwd_nondet", "bwd")


def _route_for_origin(
    origin: str,
    call: CallSpec,
    info: DeviceInfo,
    rows: int | None,
    deterministic: bool,
    packages: Sequence[Any],
) -> tuple[Route | None, str]:
    """The first package of ``origin`` serving the call, or None and the reason."""
    if not info.is_cuda:
        return None, f"device {info.device} is not a CUDA device with a known capability"
    if info.sm_count is None or info.sm_count <= 0:
        return None, f"the SM count of {info.device} is unknown"
    candidates = [p for p in packages if p.origin == origin and p.op == OP]
    if not candidates:
        hint = " (run tools/vendor_cake.py)" if origin == "vendored" else ""
        return None, f"no {origin} {OP} package is installed{hint}"
    reasons = []
    for package in candidates:
        arch = package.arch_for_capability(info.capability)
        if arch is None:
            cc = ".".join(str(v) for v in info.capability)
            reasons.append(f"package {package.name!r} has no program for compute capability "
                           f"{cc} (arches {', '.join(package.arches()) or 'none'})")
            continue
        for kind in _kinds(call.kind, deterministic):
            spec = CallSpec(op=call.op, kind=kind, hidden=call.hidden, residual=call.residual,
                            x_dtype=call.x_dtype, w_dtype=call.w_dtype,
                            cast_before_weight_mul=call.cast_before_weight_mul,
                            zero_centered_gamma=call.zero_centered_gamma)
            problem = package.supports(spec, arch)
            if problem is not None:
                reasons.append(problem)
                continue
            try:
                if rows is None:
                    names = package.route_modules(arch, call.hidden, kind, call.residual)
                    modules = tuple(package.modules[name] for name in names)
                else:
                    modules = package.select_modules(arch, call.hidden, kind, call.residual,
                                                     rows)
                owner = (package.workspace_module(arch, call.hidden, kind, call.residual)
                         if kind != "fwd" else None)
            except (CakePackageError, RecordError) as exc:
                reasons.append(str(exc))
                continue
            return Route(package=package, arch=arch, kind=kind, modules=modules,
                         workspace_module=owner), ""
    return None, "; ".join(reasons)


def _log_once(level: int, message: str, key: tuple[str, str]) -> None:
    with _lock:
        if key in _logged:
            return
        _logged.add(key)
    LOGGER.log(level, message)


def _describe(call: CallSpec, info: DeviceInfo, rows: int | None) -> str:
    contract = "+".join(call.contracts)
    return (f"rmsnorm {call.kind}{'_residual' if call.residual else ''} hidden={call.hidden} "
            f"rows={rows} x={call.x_dtype} w={call.w_dtype} contract={contract} "
            f"on {info.device}")


@functools.lru_cache(maxsize=4096)
def _cached_decision(
    call: CallSpec, info: DeviceInfo, rows: int | None, requested: str, strict: bool,
    deterministic: bool,
) -> Decision:
    if requested == "reference":
        return Decision("reference", info, call, rows, requested, strict)
    packages = _installed_packages(requested, strict) if info.is_cuda else ()
    rejected: list[tuple[str, str]] = []
    order = PROGRAM_BACKENDS if requested == "auto" else (requested,)
    for origin in order:
        route, reason = _route_for_origin(origin, call, info, rows, deterministic, packages)
        if route is not None:
            return Decision(origin, info, call, rows, requested, strict, route, tuple(rejected))
        rejected.append((origin, reason))
    what = _describe(call, info, rows)
    why = "; ".join(f"{origin}: {reason}" for origin, reason in rejected)
    if strict:
        wanted = "no Cake program serves it" if requested == "auto" else (
            f"the {requested} backend cannot serve it")
        raise RMSNormUnsupportedError(f"strict mode: {what}: {wanted}: {why}")
    if requested != "auto":
        # A forced program backend that cannot serve the call: fall back along the auto order.
        fallback = _cached_decision(call, info, rows, "auto", False, deterministic)
        _log_once(logging.WARNING,
                  f"miles_ext_kernels: backend={requested!r} cannot serve {what} ({why}); "
                  f"using {fallback.backend}", (requested, why))
        return Decision(fallback.backend, info, call, rows, requested, strict, fallback.route,
                        tuple(rejected) + fallback.rejected)
    level = logging.WARNING if info.device.type == "cuda" else logging.INFO
    _log_once(level, f"miles_ext_kernels: {what} falls back to the PyTorch reference "
                     f"backend: {why}", ("reference", why))
    return Decision("reference", info, call, rows, requested, strict, None, tuple(rejected))


def decide(
    call: CallSpec,
    device: torch.device | str,
    *,
    rows: int | None = None,
    backend: str | None = None,
    strict: bool | None = None,
    deterministic: bool = True,
) -> Decision:
    """The backend serving ``call`` on ``device`` for ``rows`` tokens (None: any row count).

    ``deterministic=False`` prefers a ``bwd_nondet`` route and uses the deterministic one when
    none exists. Raises :class:`RMSNormUnsupportedError` in strict mode instead of falling back.
    """
    info = device_info(device)
    return _cached_decision(call, info, rows, resolve_backend(backend), resolve_strict(strict),
                            bool(deterministic))


# ----------------------------------------------------------------------------- explain


@functools.lru_cache(maxsize=1024)
def make_call(kind: str, hidden: int, x_dtype: torch.dtype, w_dtype: torch.dtype, *,
              residual: bool = False, zero_centered_gamma: bool = False,
              cast_before_weight_mul: bool = False) -> CallSpec:
    """The :class:`CallSpec` of one RMSNorm call."""
    return CallSpec(op=OP, kind=kind, hidden=int(hidden), residual=bool(residual),
                    x_dtype=dtype_name(x_dtype), w_dtype=dtype_name(w_dtype),
                    cast_before_weight_mul=bool(cast_before_weight_mul),
                    zero_centered_gamma=bool(zero_centered_gamma))


@dataclass(frozen=True)
class PlanExplanation:
    """What one direction (forward or backward) of a call would run.

    ``backend`` is ``"error"`` when the call would raise instead (strict mode with no program,
    or a broken vendored package the request depends on); ``error`` then holds the message.
    """

    direction: str
    backend: str
    package: str | None = None
    origin: str | None = None
    arch: str | None = None
    route_kind: str | None = None
    programs: tuple[str, ...] = ()
    grids: tuple[tuple[int, int, int], ...] = ()
    workspace_bytes: int = 0
    n_chunks: int | None = None
    rejected: tuple[tuple[str, str], ...] = ()
    error: str | None = None

    def lines(self) -> list[str]:
        """Human-readable lines."""
        head = f"{self.direction}: backend={self.backend}"
        if self.error is not None:
            head += f" (the call raises: {self.error})"
        if self.package is not None:
            head += (f" package={self.package} ({self.origin}) arch={self.arch} "
                     f"route={self.route_kind}")
        out = [head]
        for name, grid in zip(self.programs, self.grids, strict=True):
            out.append(f"  program {name} grid={grid}")
        if self.workspace_bytes:
            out.append(f"  workspace {self.workspace_bytes} bytes, n_chunks={self.n_chunks}")
        for backend, reason in self.rejected:
            out.append(f"  not {backend}: {reason}")
        return out


@dataclass(frozen=True)
class Explanation:
    """Which backend, package, programs and grids a call would use, and why not the others."""

    device: str
    rows: int
    hidden: int
    forward: PlanExplanation
    backward: PlanExplanation

    @property
    def backend(self) -> str:
        """The forward's backend (the backward's is in ``backward.backend``)."""
        return self.forward.backend

    @property
    def raises(self) -> bool:
        """True when the call (forward or backward) would raise instead of running."""
        return self.forward.error is not None or self.backward.error is not None

    def __str__(self) -> str:
        lines = [f"rmsnorm rows={self.rows} hidden={self.hidden} on {self.device}"]
        lines += self.forward.lines() + self.backward.lines()
        return "\n".join(lines)


def _plan(direction: str, decision: Decision, rows: int, hidden: int) -> PlanExplanation:
    from miles_ext_kernels.cake import routing

    route = decision.route
    if route is None or rows == 0:
        return PlanExplanation(direction, decision.backend, rejected=decision.rejected)
    sm_count = int(decision.device.sm_count)
    n_chunks = None
    workspace = 0
    owner = route.workspace_module
    if owner is not None:
        layout = routing.workspace_layout(owner, rows, sm_count=sm_count, hidden=hidden)
        n_chunks = int(layout["n_chunks"])
        workspace = int(layout["total_bytes"])
    grids = tuple(routing.launch_grid(r, rows, sm_count=sm_count, hidden=hidden,
                                      n_chunks=n_chunks) for r in route.modules)
    return PlanExplanation(direction, decision.backend, package=str(route.package.name),
                           origin=route.origin, arch=route.arch, route_kind=route.kind,
                           programs=tuple(r.name for r in route.modules), grids=grids,
                           workspace_bytes=workspace, n_chunks=n_chunks,
                           rejected=decision.rejected)


def _explain_direction(direction: str, call: CallSpec, device: torch.device, rows: int,
                       backend: str | None, strict: bool | None,
                       deterministic: bool) -> PlanExplanation:
    """What one direction of the call does: its plan, or the error the call would raise.

    ``rows == 0`` never dispatches (the call returns empty outputs), so it is explained for any
    row count and never raises, like the call.
    """
    if rows == 0:
        decision = decide(call, device, rows=None, backend=backend, strict=False,
                          deterministic=deterministic)
        return _plan(direction, decision, rows, call.hidden)
    try:
        decision = decide(call, device, rows=rows, backend=backend, strict=strict,
                          deterministic=deterministic)
    except (RMSNormUnsupportedError, VendoredPackageError) as exc:
        return PlanExplanation(direction, "error", error=f"{type(exc).__name__}: {exc}")
    return _plan(direction, decision, rows, call.hidden)


def explain(
    x: torch.Tensor,
    w: torch.Tensor,
    *,
    residual: torch.Tensor | None = None,
    deterministic: bool = True,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    backend: str | None = None,
    strict: bool | None = None,
) -> Explanation:
    """Explain what ``rmsnorm(x, w, residual=..., backend=..., strict=...)`` would do, forward
    and backward: the backend, package, programs and grids, and why the other backends were not
    chosen. Never launches anything.

    The arguments are checked as ``rmsnorm`` checks them (the same ``TypeError`` /
    ``ValueError``). A direction that the call would refuse (strict mode, from the argument or
    ``$MILES_EXT_KERNELS_STRICT``, where it would fall back; a broken vendored package with
    ``backend="vendored"``) is reported with ``backend="error"`` and the error's message, and
    :attr:`Explanation.raises` is True.
    """
    from miles_ext_kernels.cake.ops.rmsnorm import _check_bool, validate_forward_args

    validate_forward_args(x, w, 1e-6, residual, zero_centered_gamma, cast_before_weight_mul)
    _check_bool(deterministic, "deterministic")
    hidden = int(x.shape[-1])
    rows = x.numel() // hidden
    plans = []
    for direction, kind in (("forward", "fwd"), ("backward", "bwd")):
        call = make_call(kind, hidden, x.dtype, w.dtype, residual=residual is not None,
                         zero_centered_gamma=zero_centered_gamma,
                         cast_before_weight_mul=cast_before_weight_mul)
        plans.append(_explain_direction(direction, call, x.device, rows, backend, strict,
                                        deterministic))
    return Explanation(str(x.device), rows, hidden, plans[0], plans[1])


def is_supported(
    device: torch.device | str,
    hidden: int,
    *,
    dtype: torch.dtype = torch.bfloat16,
    weight_dtype: torch.dtype = torch.bfloat16,
    residual: bool = False,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    deterministic: bool = True,
    backend: str | None = None,
) -> bool:
    """Whether a Cake program (vendored or first-party) serves both directions of the call.

    The reference backend always works and does not count, unless forced with
    ``backend="reference"`` (then True). Never raises for an unsupported combination: a device
    that does not exist here (``"cuda"`` without CUDA) or a vendored package that cannot be
    loaded (asked for with ``backend="vendored"``) gives False.
    """
    requested = resolve_backend(backend)
    if requested == "reference":
        return True
    if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden <= 0:
        return False
    try:
        calls = [make_call(kind, hidden, dtype, weight_dtype, residual=residual,
                           zero_centered_gamma=zero_centered_gamma,
                           cast_before_weight_mul=cast_before_weight_mul)
                 for kind in ("fwd", "bwd")]
    except (TypeError, RecordError):
        return False
    for call in calls:
        try:
            decision = decide(call, device, rows=None, backend=requested, strict=False,
                              deterministic=deterministic)
        except DeviceUnavailableError:
            return False
        except VendoredPackageError as exc:
            _log_once(logging.WARNING, f"miles_ext_kernels: {exc}", ("vendored-problem", str(exc)))
            return False
        if decision.backend == "reference":
            return False
        if requested != "auto" and decision.backend != requested:
            return False
    return True
