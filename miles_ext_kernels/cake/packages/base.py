"""The ``CakePackage`` interface every package layout implements, and its errors.

A package is data: module records, routes per arch, the arch of each compute capability,
where its sources live. Layout adapters (``upstream_table``, ``build_json``) fill it in; the
JIT, the dispatcher and the CLI only talk to this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from miles_ext_kernels.cake.packages.records import CallSpec, ModuleRecord
from miles_ext_kernels.cake.routing import KINDS, owns_workspace, route_key, select_rule_admits

ORIGINS: tuple[str, ...] = ("vendored", "first_party")


class CakePackageError(ValueError):
    """Base class of package loading and routing errors."""


class UnsupportedLayoutError(CakePackageError):
    """A package's on-disk layout is not one the runtime has an adapter for (or is malformed)."""


class UnsupportedRouteError(CakePackageError):
    """No route of the package serves the asked (arch, hidden, kind, residual, rows)."""


class VendoredPackageError(CakePackageError):
    """A vendored op, or the whole VENDORED.json, cannot be loaded (raised by the dispatcher in
    strict mode or for ``backend="vendored"``; otherwise the op is skipped with a warning).

    ``manifest`` is the VENDORED.json path, ``op`` the op (None: the whole manifest); the
    original error is the ``__cause__``.
    """

    def __init__(self, message: str, *, manifest: Path, op: str | None) -> None:
        super().__init__(message)
        self.manifest = manifest
        self.op = op


def capability_tuple(cc: Any) -> tuple[int, int] | None:
    """Normalise a compute capability (``(10, 0)``, ``[10, 0]``, ``"10.0"``); None if malformed."""
    if isinstance(cc, str):
        parts = cc.split(".")
    elif isinstance(cc, Sequence):
        parts = list(cc)
    else:
        return None
    if len(parts) != 2:
        return None
    try:
        major, minor = (int(p) for p in parts)
    except (TypeError, ValueError):
        return None
    return (major, minor)


class CakePackage(ABC):
    """One Cake package: module records + routes + where its sources and headers are.

    Subclasses set the attributes in ``__init__`` and implement ``_route_names`` (the route's
    module names for one hidden size, or None) and ``_support_problem`` (layout-specific call
    checks). ``vendor_dir``, ``vendored_files`` and ``object_format`` are set for vendored
    packages: ``vendored_files`` maps vendor-relative paths to their VENDORED.json
    ``FileEntry`` (``blob``, ``mode``, ``size``, ``sha256``), for every file the build reads.
    """

    name: str
    op: str
    layout: str
    origin: str
    source_root: Path
    include_dirs: tuple[Path, ...]
    modules: Mapping[str, ModuleRecord]
    routes: Mapping[str, Mapping[str, tuple[str, ...]]]
    arch_by_capability: Mapping[tuple[int, int], str]
    vendor_dir: Path | None = None
    vendored_files: Mapping[str, Mapping[str, Any]] | None = None
    object_format: str = "sha1"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, op={self.op!r}, "
                f"layout={self.layout!r}, origin={self.origin!r}, root={str(self.source_root)!r})")

    # ---- arches -------------------------------------------------------------------------
    def arches(self) -> tuple[str, ...]:
        """Arches with at least one route, sorted."""
        return tuple(sorted(arch for arch, routes in self.routes.items() if routes))

    def arch_for_capability(self, cc: Any) -> str | None:
        """The package's arch for a compute capability ``(major, minor)``; None if none."""
        key = capability_tuple(cc)
        if key is None:
            return None
        arch = self.arch_by_capability.get(key)
        return arch if arch in self.routes else None

    # ---- layout hooks -------------------------------------------------------------------
    @abstractmethod
    def hidden_sizes(self, arch: str | None = None) -> str:
        """Human-readable description of the hidden sizes served (on ``arch`` if given)."""

    @abstractmethod
    def _route_names(
        self, arch: str, hidden: int, kind: str, residual: bool
    ) -> tuple[str, ...] | None:
        """Module names of one route (already filtered by hidden size), or None if absent."""

    @abstractmethod
    def _support_problem(self, call: CallSpec) -> str | None:
        """Layout-specific reason a call (dtypes, contract, kind, hidden) is refused."""

    # ---- routing ------------------------------------------------------------------------
    def route_forms(self, arch: str) -> tuple[str, ...]:
        """Route forms (``<kind>[_residual]``) the package offers on ``arch``."""
        forms = set()
        for kind in KINDS:
            for residual in (False, True):
                form = route_key(None, kind, residual)
                if any(self._form_of(key) == form for key in self.routes.get(arch, {})):
                    forms.add(form)
        return tuple(sorted(forms))

    @staticmethod
    def _form_of(key: str) -> str:
        head, sep, tail = key.rpartition("_h")
        return head if sep and tail.isdigit() else key

    def describe_support(self, arch: str | None = None) -> str:
        """What the package serves: arches, hidden sizes, route forms (for error messages)."""
        arches = self.arches()
        if arch in self.routes:
            return (f"on {arch}: hidden {self.hidden_sizes(arch)}; routes "
                    f"{', '.join(self.route_forms(arch))}; arches {', '.join(arches)}")
        return (f"arches {', '.join(arches) or 'none'}; hidden {self.hidden_sizes()}; routes "
                + "; ".join(f"{a}: {', '.join(self.route_forms(a))}" for a in arches))

    def _unsupported(self, what: str, arch: str | None) -> UnsupportedRouteError:
        return UnsupportedRouteError(
            f"package {self.name!r} ({self.layout}) has no route for {what}; it supports "
            f"{self.describe_support(arch)}"
        )

    def route_modules(
        self, arch: str, hidden: int, kind: str, residual: bool
    ) -> tuple[str, ...]:
        """Ordered module names of one route (every program the route may launch)."""
        names = self._route_names(arch, hidden, kind, residual) if arch in self.routes else None
        if names:
            return names
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        what = f"arch={arch!r} hidden={hidden} kind={kind!r} residual={bool(residual)}"
        raise self._unsupported(what, arch if arch in self.routes else None)

    def select_modules(
        self, arch: str, hidden: int, kind: str, residual: bool, rows: int
    ) -> tuple[ModuleRecord, ...]:
        """Records one call of ``rows`` tokens launches, in route order."""
        if type(rows) is not int or rows <= 0:
            raise ValueError(f"rows must be a positive int, got {rows!r}")
        modules = self.modules
        records = tuple(
            record
            for record in map(modules.__getitem__, self.route_modules(arch, hidden, kind, residual))
            if select_rule_admits(record.select_rule, rows)
        )
        if not records:
            raise UnsupportedRouteError(
                f"package {self.name!r}: no module of route "
                f"{route_key(None, kind, residual)} (hidden={hidden}) on {arch} admits "
                f"{rows} rows"
            )
        return records

    def workspace_module(
        self, arch: str, hidden: int, kind: str, residual: bool
    ) -> ModuleRecord | None:
        """The route's module owning the backward workspace (None when no module needs one)."""
        owners = [
            self.modules[name]
            for name in self.route_modules(arch, hidden, kind, residual)
            if owns_workspace(self.modules[name])
        ]
        if len(owners) > 1:
            raise UnsupportedRouteError(
                f"package {self.name!r}: route {route_key(None, kind, residual)} "
                f"(hidden={hidden}) on {arch} declares {len(owners)} workspace owners "
                f"{[r.name for r in owners]}; expected at most one"
            )
        return owners[0] if owners else None

    def supports(self, call: CallSpec, arch: str | None = None) -> str | None:
        """None when the package serves ``call`` (on ``arch`` if given), else the reason."""
        if call.op != self.op:
            return f"package {self.name!r} implements op {self.op!r}, not {call.op!r}"
        problem = self._support_problem(call)
        if problem is not None:
            return f"package {self.name!r} ({self.layout}): {problem}"
        arches = [arch] if arch is not None else list(self.arches())
        for candidate in arches:
            if candidate in self.routes and self._route_names(
                candidate, call.hidden, call.kind, call.residual
            ):
                return None
        what = (f"hidden={call.hidden} kind={call.kind!r} residual={call.residual}"
                + (f" on {arch!r}" if arch is not None else ""))
        return str(self._unsupported(what, arch))

    # ---- files --------------------------------------------------------------------------
    def source_path(self, rel: str) -> Path:
        """Absolute path of a record source (relative POSIX path under ``source_root``)."""
        pure = PurePosixPath(rel)
        if (not rel or "\\" in rel or "\0" in rel or pure.is_absolute()
                or any(part in ("..", ".", "") for part in rel.split("/"))):
            raise ValueError(f"package {self.name!r}: source path {rel!r} is not a clean "
                             "relative POSIX path")
        return self.source_root.joinpath(*pure.parts)
