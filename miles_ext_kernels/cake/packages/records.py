"""Module records (upstream's 16-key schema) and call descriptions, validated on the way in.

A ``ModuleRecord`` is one (kernel, launch policy) pair of a Cake package, whatever the
package's layout. Values are frozen on construction (lists become tuples, dicts become
read-only mappings) so a record handed out by a package cannot be changed behind its back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from miles_ext_kernels.cake.routing import (
    GRID_RULE_KINDS,
    KINDS,
    PARTIAL_DTYPE_BYTES,
    SELECT_RULE_KINDS,
    WORKSPACE_RULE_KINDS,
)

UPSTREAM_RECORD_KEYS: tuple[str, ...] = (
    "kernel",
    "kernel_symbol",
    "sources",
    "source_sha256",
    "arches",
    "cache_names",
    "compile_flags",
    "ffi_entry",
    "hidden",
    "role",
    "arg_plan",
    "logical",
    "launch",
    "grid_rule",
    "select_rule",
    "workspace_rule",
)
ARG_PLAN_KINDS: tuple[str, ...] = ("buffer", "parameter", "grid")
GRID_ARGS: tuple[str, ...] = ("grid_x", "grid_y", "grid_z")
DTYPES: tuple[str, ...] = ("bfloat16", "float16", "float32")
CONTRACTS: tuple[str, ...] = ("default", "cast_before_weight_mul", "zero_centered_gamma")

_ARCH_RE = re.compile(r"^sm_[0-9]{2,3}[af]?$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CACHE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")

_GRID_REQUIRED: dict[str, dict[str, int]] = {
    # field -> smallest allowed value
    "rows_per_cta": {"rows_per_cta": 1},
    "fixed": {"ctas": 1},
    "sm_scaled_bounded": {"ctas_per_sm": 1},
    "chunk_bounded": {"ctas_per_sm": 1},
}
_GRID_OPTIONAL: dict[str, dict[str, int]] = {
    "rows_per_cta": {"grid_limit": 0, "grid_per_sm": 0},
    "sm_scaled_bounded": {"grid_factor": 1, "launch_bound_ctas_per_sm": 1},
}
_WORKSPACE_REQUIRED: dict[str, dict[str, int]] = {
    "persistent_grid": {"counters": 0},
    "fixed_chunks": {"max_chunks": 1, "min_rows_per_chunk": 1, "counters": 0},
    "atomic": {},
    "borrowed": {"above_rows": 0},
}
_WORKSPACE_OPTIONAL: dict[str, dict[str, int]] = {
    "fixed_chunks": {"sqrt_rows_factor": 0, "spread_chunks": 0, "spread_rows_per_chunk": 1,
                     "large_rows": 0, "large_max_chunks": 1},
}


class RecordError(ValueError):
    """A module record (or call description) has a key of the wrong shape."""


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Checker:
    """Raises ``RecordError`` naming the package, module and key."""

    def __init__(self, package: str, module: str) -> None:
        self.package = package
        self.module = module

    def fail(self, key: str, problem: str) -> RecordError:
        return RecordError(f"package {self.package!r}: module {self.module!r}: key {key!r}: "
                           f"{problem}")

    def string(self, key: str, value: Any, pattern: re.Pattern[str] | None = None) -> None:
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"must be a non-empty string, got {value!r}")
        if pattern is not None and not pattern.match(value):
            raise self.fail(key, f"{value!r} does not match {pattern.pattern}")

    def mapping(self, key: str, value: Any) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping, got {type(value).__name__}")
        return value

    def sequence(self, key: str, value: Any, *, non_empty: bool = True) -> Sequence[Any]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise self.fail(key, f"must be a list, got {type(value).__name__}")
        if non_empty and not value:
            raise self.fail(key, "must not be empty")
        return value

    def int_fields(self, key: str, rule: Mapping[str, Any], minimum: Mapping[str, int],
                   *, required: bool) -> None:
        for name, smallest in minimum.items():
            if name not in rule:
                if required:
                    raise self.fail(key, f"{rule.get('kind')!r} rule needs {name!r}")
                continue
            value = rule[name]
            if not _is_int(value) or value < smallest:
                raise self.fail(key, f"{name} must be an int >= {smallest}, got {value!r}")


def _check_relative_path(check: _Checker, key: str, path: Any) -> None:
    check.string(key, path)
    pure = PurePosixPath(path)
    if ("\\" in path or "\0" in path or pure.is_absolute()
            or any(part in ("..", ".", "") for part in path.split("/"))):
        raise check.fail(key, f"{path!r} is not a clean relative POSIX path")


def _check_sources(check: _Checker, raw: Mapping[str, Any]) -> None:
    sources = check.sequence("sources", raw["sources"])
    for path in sources:
        _check_relative_path(check, "sources", path)
    if len(set(sources)) != len(sources):
        raise check.fail("sources", "lists a path twice")
    digests = check.mapping("source_sha256", raw["source_sha256"])
    missing = sorted(set(sources) - set(digests))
    if missing:
        raise check.fail("source_sha256", f"has no digest for sources {missing}")
    for path, digest in digests.items():
        _check_relative_path(check, "source_sha256", path)
        if not isinstance(digest, str) or not _SHA256_RE.match(digest):
            raise check.fail("source_sha256", f"{path}: {digest!r} is not a lowercase sha256")


def _check_arches(check: _Checker, raw: Mapping[str, Any]) -> None:
    arches = check.sequence("arches", raw["arches"])
    for arch in arches:
        check.string("arches", arch, _ARCH_RE)
    if len(set(arches)) != len(arches):
        raise check.fail("arches", "lists an arch twice")
    cache_names = check.mapping("cache_names", raw["cache_names"])
    if set(cache_names) != set(arches):
        raise check.fail("cache_names", f"keys {sorted(cache_names)} must equal arches "
                                        f"{sorted(arches)}")
    for name in cache_names.values():
        check.string("cache_names", name, _CACHE_NAME_RE)
    flags = check.sequence("compile_flags", raw["compile_flags"], non_empty=False)
    for flag in flags:
        check.string("compile_flags", flag)


def _check_arguments(check: _Checker, raw: Mapping[str, Any]) -> None:
    plan = check.sequence("arg_plan", raw["arg_plan"])
    logical = check.mapping("logical", raw["logical"])
    for name, meaning in logical.items():
        check.string("logical", name, _IDENTIFIER_RE)
        if not isinstance(meaning, str) or not _IDENTIFIER_RE.match(meaning):
            raise check.fail("logical", f"{name!r} maps to {meaning!r}, not an identifier")
    grid_names = []
    for entry in plan:
        if (isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence)
                or len(entry) != 2):
            raise check.fail("arg_plan", f"entry {entry!r} must be a (kind, name) pair")
        kind, name = entry
        if kind not in ARG_PLAN_KINDS:
            raise check.fail("arg_plan", f"entry {entry!r}: kind must be one of "
                                         f"{ARG_PLAN_KINDS}")
        check.string("arg_plan", name, _IDENTIFIER_RE)
        if kind == "grid":
            grid_names.append(name)
        elif name not in logical:
            raise check.fail("arg_plan", f"kernel argument {name!r} has no entry in logical")
    if grid_names and tuple(grid_names) != GRID_ARGS:
        raise check.fail("arg_plan", f"grid entries must be {GRID_ARGS}, got {grid_names}")


def _check_rules(check: _Checker, raw: Mapping[str, Any]) -> None:
    grid = check.mapping("grid_rule", raw["grid_rule"])
    kind = grid.get("kind")
    if kind not in GRID_RULE_KINDS:
        raise check.fail("grid_rule", f"kind {kind!r} is not one of {GRID_RULE_KINDS}")
    check.int_fields("grid_rule", grid, _GRID_REQUIRED[kind], required=True)
    check.int_fields("grid_rule", grid, _GRID_OPTIONAL.get(kind, {}), required=False)

    select = raw["select_rule"]
    if select is not None:
        select = check.mapping("select_rule", select)
        if select.get("kind") not in SELECT_RULE_KINDS:
            raise check.fail("select_rule", f"kind {select.get('kind')!r} is not one of "
                                            f"{SELECT_RULE_KINDS} or None")
        above, at_most = select.get("above"), select.get("at_most", "<absent>")
        if not _is_int(above) or above < 0:
            raise check.fail("select_rule", f"above must be an int >= 0, got {above!r}")
        if select["kind"] == "rows_outside" and not _is_int(at_most):
            raise check.fail("select_rule", f"rows_outside needs an int at_most (the window it "
                                            f"leaves out), got {at_most!r}")
        if at_most is not None and (not _is_int(at_most) or at_most <= above):
            raise check.fail("select_rule", f"at_most must be None or an int > above, "
                                            f"got {at_most!r}")

    workspace = raw["workspace_rule"]
    if workspace is not None:
        workspace = check.mapping("workspace_rule", workspace)
        wkind = workspace.get("kind")
        if wkind not in WORKSPACE_RULE_KINDS:
            raise check.fail("workspace_rule", f"kind {wkind!r} is not one of "
                                               f"{WORKSPACE_RULE_KINDS} or None")
        check.int_fields("workspace_rule", workspace, _WORKSPACE_REQUIRED[wkind], required=True)
        check.int_fields("workspace_rule", workspace, _WORKSPACE_OPTIONAL.get(wkind, {}),
                         required=False)
        dtype = workspace.get("partial_dtype", "float64")
        if wkind == "fixed_chunks" and dtype not in PARTIAL_DTYPE_BYTES:
            raise check.fail("workspace_rule", f"partial_dtype must be one of "
                                               f"{tuple(PARTIAL_DTYPE_BYTES)}, got {dtype!r}")
        if wkind == "fixed_chunks" and workspace.get("large_rows", 0) > 0:
            large = workspace.get("large_max_chunks")
            if large is None or large > workspace["max_chunks"]:
                raise check.fail("workspace_rule", f"large_rows needs large_max_chunks between 1 "
                                                   f"and max_chunks ({workspace['max_chunks']}), "
                                                   f"got {large!r}")
        if wkind == "persistent_grid" and kind not in ("sm_scaled_bounded", "fixed"):
            raise check.fail("workspace_rule", f"persistent_grid needs a bounded grid "
                                               f"(sm_scaled_bounded or fixed), not {kind!r}")
    if kind == "chunk_bounded" and (workspace is None or workspace["kind"] != "fixed_chunks"):
        raise check.fail("grid_rule", "chunk_bounded needs a fixed_chunks workspace_rule")


def validate_record_fields(package: str, name: str, raw: Mapping[str, Any]) -> None:
    """Check every upstream key of one raw record; ``RecordError`` names package, module, key."""
    check = _Checker(package, name)
    if not isinstance(raw, Mapping):
        raise RecordError(f"package {package!r}: module {name!r}: record must be a mapping, "
                          f"got {type(raw).__name__}")
    missing = [key for key in UPSTREAM_RECORD_KEYS if key not in raw]
    if missing:
        raise RecordError(f"package {package!r}: module {name!r}: missing keys {missing}")
    check.string("kernel", raw["kernel"], _IDENTIFIER_RE)
    check.string("kernel_symbol", raw["kernel_symbol"], _IDENTIFIER_RE)
    check.string("ffi_entry", raw["ffi_entry"], _IDENTIFIER_RE)
    check.string("role", raw["role"])
    hidden = raw["hidden"]
    if hidden is not None and (not _is_int(hidden) or hidden <= 0):
        raise check.fail("hidden", f"must be a positive int or None, got {hidden!r}")
    _check_sources(check, raw)
    _check_arches(check, raw)
    _check_arguments(check, raw)
    check.mapping("launch", raw["launch"])
    _check_rules(check, raw)


@dataclass(frozen=True)
class ModuleRecord:
    """One (kernel, launch policy) pair: upstream's 16 record keys plus layout extras.

    ``name`` is the record's key in its package's module table (``<kernel>__<stage>`` for the
    second and later launch policies of one kernel). ``extra`` holds layout-specific keys
    (``hidden_rule`` in build.json packages). ``source_sha256`` covers every source and may
    name further files the build reads (first-party headers); all of them are verified.
    """

    name: str
    kernel: str
    kernel_symbol: str
    sources: tuple[str, ...]
    source_sha256: Mapping[str, str]
    arches: tuple[str, ...]
    cache_names: Mapping[str, str]
    compile_flags: tuple[str, ...]
    ffi_entry: str
    hidden: int | None
    role: str
    arg_plan: tuple[tuple[str, str], ...]
    logical: Mapping[str, str]
    launch: Mapping[str, Any]
    grid_rule: Mapping[str, Any]
    select_rule: Mapping[str, Any] | None
    workspace_rule: Mapping[str, Any] | None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_mapping(
        cls,
        package: str,
        name: str,
        raw: Mapping[str, Any],
        *,
        extra_keys: Sequence[str] = (),
    ) -> ModuleRecord:
        """Validate ``raw`` (upstream keys + the allowed ``extra_keys``) and freeze it.

        Unknown keys are an error, so a typo in a package file is caught at load time.
        """
        if not isinstance(name, str) or not _IDENTIFIER_RE.match(name):
            raise RecordError(f"package {package!r}: module name {name!r} is not an identifier")
        validate_record_fields(package, name, raw)
        unknown = sorted(set(raw) - set(UPSTREAM_RECORD_KEYS) - set(extra_keys))
        if unknown:
            raise RecordError(f"package {package!r}: module {name!r}: unknown keys {unknown}; "
                              f"allowed: {list(UPSTREAM_RECORD_KEYS) + list(extra_keys)}")
        values = {key: _freeze(raw[key]) for key in UPSTREAM_RECORD_KEYS}
        extra = {key: _freeze(raw[key]) for key in extra_keys if key in raw}
        return cls(name=name, extra=MappingProxyType(extra), **values)

    def as_dict(self) -> dict[str, Any]:
        """The 16 upstream keys (plus extras) as plain JSON-like values."""
        out = {key: _thaw(getattr(self, key)) for key in UPSTREAM_RECORD_KEYS}
        out.update({key: _thaw(value) for key, value in self.extra.items()})
        return out

    def __hash__(self) -> int:
        return hash((self.name, self.kernel, tuple(sorted(self.source_sha256.items()))))


@dataclass(frozen=True)
class CallSpec:
    """What one public call asks of a package: op, kind, hidden size, dtypes and contract."""

    op: str
    kind: str
    hidden: int
    residual: bool = False
    x_dtype: str = "bfloat16"
    w_dtype: str = "bfloat16"
    cast_before_weight_mul: bool = False
    zero_centered_gamma: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op:
            raise RecordError(f"CallSpec.op must be a non-empty string, got {self.op!r}")
        if self.kind not in KINDS:
            raise RecordError(f"CallSpec.kind must be one of {KINDS}, got {self.kind!r}")
        if not _is_int(self.hidden) or self.hidden <= 0:
            raise RecordError(f"CallSpec.hidden must be a positive int, got {self.hidden!r}")
        for name in ("x_dtype", "w_dtype"):
            if getattr(self, name) not in DTYPES:
                raise RecordError(f"CallSpec.{name} must be one of {DTYPES}, "
                                  f"got {getattr(self, name)!r}")
        for name in ("residual", "cast_before_weight_mul", "zero_centered_gamma"):
            if not isinstance(getattr(self, name), bool):
                raise RecordError(f"CallSpec.{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def contracts(self) -> tuple[str, ...]:
        """Rounding contracts the call needs: ``("default",)`` or the flags it sets."""
        named = tuple(
            name
            for name in ("cast_before_weight_mul", "zero_centered_gamma")
            if getattr(self, name)
        )
        return named or ("default",)
