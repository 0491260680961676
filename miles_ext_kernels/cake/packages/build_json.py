"""Adapter for first-party packages described by ``build.json`` (``miles-cake-build/1``).

See docs/kernel_package_format.md. Sources, ``source_sha256`` keys and ``include_dirs`` are
relative to the directory holding ``build.json``. Route keys are ``<kind>[_residual]``; a route
launches, in order, its modules whose ``hidden_rule`` admits the hidden size and whose
``select_rule`` admits the row count. ``hidden`` is ``null`` in a record (the hidden size is a
run-time scalar); an int restricts the record to that one size. ``source_sha256`` may name
headers besides the sources (they are verified before the first build too). Optional top-level
keys besides the documented ones: ``headers``, ``dtype_pairs`` (the [x, w] pairs served; when
present a call's pair must be listed), ``alignment_bytes`` and ``row_stride_multiple``
(facade constraints, exposed as attributes). Unknown keys are an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from miles_ext_kernels.cake.packages.base import CakePackage, UnsupportedLayoutError
from miles_ext_kernels.cake.packages.records import (
    CONTRACTS,
    DTYPES,
    CallSpec,
    ModuleRecord,
    RecordError,
)
from miles_ext_kernels.cake.routing import KINDS

LAYOUT = "build-json"
FORMAT = "miles-cake-build/1"
BUILD_JSON = "build.json"
EXTRA_RECORD_KEYS: tuple[str, ...] = ("hidden_rule",)
_TOP_KEYS_REQUIRED = ("format", "op", "name", "arch_by_capability", "hidden", "dtypes",
                      "contracts", "modules", "routes")
_TOP_KEYS_OPTIONAL = ("description", "include_dirs", "headers", "dtype_pairs",
                      "alignment_bytes", "row_stride_multiple")
_CAPABILITY_RE = re.compile(r"^([0-9]+)\.([0-9]+)$")
_ROUTE_KEY_RE = re.compile(r"^(fwd|bwd|bwd_nondet)(_residual)?$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ROUTE_CACHE_LIMIT = 4096
_MISSING = object()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def hidden_rule_admits(rule: Mapping[str, Any] | None, hidden: int) -> bool:
    """Whether a ``hidden`` rule (``min``/``max`` inclusive, ``multiple_of``) admits ``hidden``."""
    if rule is None:
        return True
    if "min" in rule and hidden < rule["min"]:
        return False
    if "max" in rule and hidden > rule["max"]:
        return False
    return not ("multiple_of" in rule and hidden % rule["multiple_of"] != 0)


class BuildJsonPackage(CakePackage):
    """A first-party Cake package read from its ``build.json``."""

    layout = LAYOUT
    origin = "first_party"

    def __init__(self, build_json: Path) -> None:
        """Load and validate ``build_json``; every problem names the file and the key."""
        self.build_json = Path(build_json)
        self._route_cache: dict[tuple[str, int, str, bool], tuple[str, ...] | None] = {}
        self.source_root = self.build_json.parent
        self.name = str(self.build_json)
        try:
            doc = json.loads(self.build_json.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UnsupportedLayoutError(f"cannot read {self.build_json}: {exc}") from exc
        if not isinstance(doc, dict):
            raise self._bad("the document must be a JSON object")
        missing = [k for k in _TOP_KEYS_REQUIRED if k not in doc]
        unknown = sorted(set(doc) - set(_TOP_KEYS_REQUIRED) - set(_TOP_KEYS_OPTIONAL))
        if missing or unknown:
            raise self._bad(f"missing keys {missing}, unknown keys {unknown}")
        if doc["format"] != FORMAT:
            raise self._bad(f"format {doc['format']!r} is not {FORMAT!r}")
        for key in ("op", "name"):
            if not isinstance(doc[key], str) or not _NAME_RE.match(doc[key]):
                raise self._bad(f"{key!r} must be an identifier, got {doc[key]!r}")
        self.op = doc["op"]
        self.name = doc["name"]
        self.description = str(doc.get("description", ""))
        self.arch_by_capability = self._read_capabilities(doc["arch_by_capability"])
        self.hidden_rule = self._read_hidden_rule("hidden", doc["hidden"])
        self.dtypes = self._read_dtypes(doc["dtypes"])
        self.contracts = self._read_contracts(doc["contracts"])
        self.include_dirs = self._read_include_dirs(doc.get("include_dirs", []))
        self.headers = self._read_headers(doc.get("headers", []))
        self.dtype_pairs = self._read_dtype_pairs(doc.get("dtype_pairs"))
        self.alignment_bytes = self._read_positive("alignment_bytes", doc.get("alignment_bytes"))
        self.row_stride_multiple = self._read_positive(
            "row_stride_multiple", doc.get("row_stride_multiple")
        )
        self.modules = self._read_modules(doc["modules"])
        self.routes = self._read_routes(doc["routes"])

    def _bad(self, problem: str) -> UnsupportedLayoutError:
        return UnsupportedLayoutError(f"{self.build_json}: {problem}")

    # ---- document parsing ---------------------------------------------------------------
    def _read_capabilities(self, raw: Any) -> Mapping[tuple[int, int], str]:
        if not isinstance(raw, dict) or not raw:
            raise self._bad("'arch_by_capability' must be a non-empty object")
        out = {}
        for cc, arch in raw.items():
            match = _CAPABILITY_RE.match(cc)
            if match is None or not isinstance(arch, str):
                raise self._bad(f"'arch_by_capability' entry {cc!r}: {arch!r} is not "
                                "\"major.minor\": \"sm_XY\"")
            out[(int(match.group(1)), int(match.group(2)))] = arch
        return MappingProxyType(out)

    def _read_hidden_rule(self, where: str, raw: Any) -> Mapping[str, int]:
        if not isinstance(raw, Mapping) or set(raw) - {"min", "max", "multiple_of"}:
            raise self._bad(f"{where} must be an object with keys among min, max, "
                            f"multiple_of, got {raw!r}")
        for key, value in raw.items():
            if not _is_int(value) or value <= 0:
                raise self._bad(f"{where}.{key} must be a positive int, got {value!r}")
        if "min" in raw and "max" in raw and raw["min"] > raw["max"]:
            raise self._bad(f"{where}: min {raw['min']} > max {raw['max']}")
        return MappingProxyType(dict(raw))

    def _read_dtypes(self, raw: Any) -> Mapping[str, tuple[str, ...]]:
        if not isinstance(raw, dict) or set(raw) != {"x", "w"}:
            raise self._bad(f"'dtypes' must be an object with keys x and w, got {raw!r}")
        for key, values in raw.items():
            if not isinstance(values, list) or not values or any(v not in DTYPES for v in values):
                raise self._bad(f"dtypes.{key} must be a non-empty list drawn from {DTYPES}, "
                                f"got {values!r}")
        return MappingProxyType({key: tuple(values) for key, values in raw.items()})

    def _read_contracts(self, raw: Any) -> tuple[str, ...]:
        if (not isinstance(raw, list) or "default" not in raw
                or any(c not in CONTRACTS for c in raw)):
            raise self._bad(f"'contracts' must list 'default' and others from {CONTRACTS}, "
                            f"got {raw!r}")
        return tuple(raw)

    def _inside(self, where: str, rel: Any) -> Path:
        if (not isinstance(rel, str) or not rel or "\\" in rel or rel.startswith("/")
                or any(part in ("..", ".", "") for part in rel.split("/"))):
            raise self._bad(f"{where}: {rel!r} is not a clean relative POSIX path")
        return self.source_root.joinpath(*rel.split("/"))

    def _read_include_dirs(self, raw: Any) -> tuple[Path, ...]:
        if not isinstance(raw, list):
            raise self._bad(f"'include_dirs' must be a list, got {raw!r}")
        return tuple(self._inside("include_dirs", rel) for rel in raw)

    def _read_headers(self, raw: Any) -> tuple[str, ...]:
        if not isinstance(raw, list):
            raise self._bad(f"'headers' must be a list of relative paths, got {raw!r}")
        for rel in raw:
            self._inside("headers", rel)
        return tuple(raw)

    def _read_dtype_pairs(self, raw: Any) -> tuple[tuple[str, str], ...] | None:
        if raw is None:
            return None
        if not isinstance(raw, list) or not raw:
            raise self._bad(f"'dtype_pairs' must be a non-empty list of [x, w], got {raw!r}")
        for pair in raw:
            if (not isinstance(pair, list) or len(pair) != 2
                    or pair[0] not in self.dtypes["x"] or pair[1] not in self.dtypes["w"]):
                raise self._bad(f"dtype_pairs entry {pair!r} must be [x, w] with x in "
                                f"{self.dtypes['x']} and w in {self.dtypes['w']}")
        return tuple((x, w) for x, w in raw)

    def _read_positive(self, key: str, raw: Any) -> int | None:
        if raw is not None and (not _is_int(raw) or raw <= 0):
            raise self._bad(f"{key!r} must be a positive int, got {raw!r}")
        return raw

    def _read_modules(self, raw: Any) -> Mapping[str, ModuleRecord]:
        if not isinstance(raw, dict) or not raw:
            raise self._bad("'modules' must be a non-empty object")
        modules = {}
        for name, record_raw in raw.items():
            try:
                record = ModuleRecord.from_mapping(
                    self.name, name, record_raw, extra_keys=EXTRA_RECORD_KEYS
                )
            except RecordError as exc:
                raise self._bad(str(exc)) from exc
            if "hidden_rule" in record.extra:
                self._read_hidden_rule(f"modules.{name}.hidden_rule", record.extra["hidden_rule"])
            for source in record.source_sha256:
                self._inside(f"modules.{name}.source_sha256", source)
            modules[name] = record
        return MappingProxyType(modules)

    def _read_routes(self, raw: Any) -> Mapping[str, Mapping[str, tuple[str, ...]]]:
        if not isinstance(raw, dict) or not raw:
            raise self._bad("'routes' must be a non-empty object")
        known_arches = set(self.arch_by_capability.values())
        routes = {}
        for arch, table in raw.items():
            if arch not in known_arches:
                raise self._bad(f"routes.{arch}: arch has no entry in arch_by_capability "
                                f"({sorted(known_arches)})")
            if not isinstance(table, dict):
                raise self._bad(f"routes.{arch} must be an object")
            arch_routes = {}
            for key, names in table.items():
                if not _ROUTE_KEY_RE.match(key):
                    raise self._bad(f"routes.{arch}.{key}: key is not <kind>[_residual] with "
                                    f"kind in {KINDS}")
                if not isinstance(names, list) or not names:
                    raise self._bad(f"routes.{arch}.{key} must be a non-empty list")
                for name in names:
                    if name not in self.modules:
                        raise self._bad(f"routes.{arch}.{key} names unknown module {name!r}")
                    if arch not in self.modules[name].arches:
                        raise self._bad(f"routes.{arch}.{key}: module {name!r} is not built "
                                        f"for {arch} (arches {self.modules[name].arches})")
                arch_routes[key] = tuple(names)
            routes[arch] = MappingProxyType(arch_routes)
        return MappingProxyType(routes)

    # ---- CakePackage hooks --------------------------------------------------------------
    def hidden_sizes(self, arch: str | None = None) -> str:
        """The package-wide hidden rule, e.g. ``64..16384, multiple of 8``."""
        rule = self.hidden_rule
        text = f"{rule.get('min', 1)}..{rule.get('max', 'any')}"
        if "multiple_of" in rule:
            text += f", multiple of {rule['multiple_of']}"
        return text

    def _admits_hidden(self, record: ModuleRecord, hidden: int) -> bool:
        if record.hidden is not None and record.hidden != hidden:
            return False
        return hidden_rule_admits(record.extra.get("hidden_rule"), hidden)

    def _route_names(
        self, arch: str, hidden: int, kind: str, residual: bool
    ) -> tuple[str, ...] | None:
        key = (arch, hidden, kind, bool(residual))
        cached = self._route_cache.get(key, _MISSING)
        if cached is not _MISSING:
            return cached
        admitted = None
        names = self.routes.get(arch, {}).get(f"{kind}{'_residual' if residual else ''}")
        if names and hidden_rule_admits(self.hidden_rule, hidden):
            admitted = tuple(n for n in names if self._admits_hidden(self.modules[n], hidden))
        if len(self._route_cache) < _ROUTE_CACHE_LIMIT:
            self._route_cache[key] = admitted or None
        return admitted or None

    def _support_problem(self, call: CallSpec) -> str | None:
        if call.x_dtype not in self.dtypes["x"]:
            return f"x dtype {call.x_dtype} is not served (x dtypes: {self.dtypes['x']})"
        if call.w_dtype not in self.dtypes["w"]:
            return f"w dtype {call.w_dtype} is not served (w dtypes: {self.dtypes['w']})"
        if self.dtype_pairs is not None and (call.x_dtype, call.w_dtype) not in self.dtype_pairs:
            return (f"dtype pair x={call.x_dtype} w={call.w_dtype} is not served (pairs: "
                    + ", ".join(f"{x}/{w}" for x, w in self.dtype_pairs) + ")")
        refused = [c for c in call.contracts if c not in self.contracts]
        if refused:
            return f"rounding contracts {refused} are not served (contracts: {self.contracts})"
        if not hidden_rule_admits(self.hidden_rule, call.hidden):
            return f"hidden {call.hidden} is not served (hidden: {self.hidden_sizes()})"
        return None
