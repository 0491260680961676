"""Adapter for the flashinfer-python 0.7.2.post1 table layout (``layout: table-0.7``).

The vendored tree holds ``jit/<stem>.py`` (the table + loader, read as data and NEVER
imported), ``csrc/<stem>/*_{kernel,binding}.cu``, ``csrc/tvm_ffi_utils.h`` and
``include/flashinfer/layout.cuh``. ``MODULES``, ``ROUTES``, ``HIDDEN_SIZES`` and
``ARCH_BY_CAPABILITY`` are module-level literals: ``ast.literal_eval`` reads them.
Record sources (``csrc/...``) resolve against the vendor directory; headers through
``<vendor>/csrc`` and ``<vendor>/include``.

The layout serves BF16 x and w, the default rounding contract and the kinds ``fwd`` / ``bwd``
only (no non-deterministic backward: a dispatcher may fall back to ``bwd`` itself).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from miles_ext_kernels.cake.manifest import FileEntry
from miles_ext_kernels.cake.packages.base import CakePackage, UnsupportedLayoutError
from miles_ext_kernels.cake.packages.records import CallSpec, ModuleRecord, RecordError

LAYOUT = "table-0.7"
TABLE_NAMES: tuple[str, ...] = ("MODULES", "ROUTES", "HIDDEN_SIZES", "ARCH_BY_CAPABILITY")
UPSTREAM_KINDS: tuple[str, ...] = ("fwd", "bwd")
_TABLE_FILE_RE = re.compile(r"^jit/([A-Za-z_][A-Za-z0-9_]*)\.py$")
_ROUTE_KEY_RE = re.compile(r"^(fwd|bwd)(_residual)?_h([1-9][0-9]*)$")
_INTEGRITY_PREFIXES: tuple[str, ...] = ("csrc/", "include/")


def find_table_files(files: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(table path, stem)`` of each ``jit/<stem>.py`` whose ``csrc/<stem>/`` is vendored too."""
    found = []
    for path in sorted(files):
        match = _TABLE_FILE_RE.match(path)
        if match and any(p.startswith(f"csrc/{match.group(1)}/") for p in files):
            found.append((path, match.group(1)))
    return found


def read_table_literals(path: Path, names: tuple[str, ...] = TABLE_NAMES) -> dict[str, Any]:
    """Module-level literal assignments ``names`` of a Python file, without importing it."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise UnsupportedLayoutError(f"cannot parse the Cake table {path}: {exc}") from exc
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets, value = [node.target.id], node.value
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            value = node.value
        else:
            continue
        for target in targets:
            if target in names and value is not None:
                try:
                    values[target] = ast.literal_eval(value)
                except ValueError as exc:
                    raise UnsupportedLayoutError(
                        f"{path}: {target} (line {node.lineno}) is not a pure literal: {exc}"
                    ) from exc
    missing = [name for name in names if name not in values]
    if missing:
        raise UnsupportedLayoutError(f"{path}: no module-level literal {missing}; "
                                     f"a {LAYOUT} table defines {list(names)}")
    return values


class UpstreamTablePackage(CakePackage):
    """A vendored flashinfer-python 0.7.2.post1 Cake table package."""

    layout = LAYOUT
    origin = "vendored"

    def __init__(
        self,
        vendor_dir: Path,
        op: str,
        files: Mapping[str, FileEntry],
        *,
        upstream_name: str = "flashinfer",
        object_format: str = "sha1",
    ) -> None:
        """Read the op's table from ``vendor_dir``.

        ``files`` are the op's VENDORED.json entries keyed by vendor-relative path
        (``OpEntry.files()``).
        """
        self.vendor_dir = Path(vendor_dir)
        self.op = op
        self.object_format = object_format
        tables = find_table_files(files)
        if len(tables) != 1:
            raise UnsupportedLayoutError(
                f"op {op!r} in {self.vendor_dir}: a {LAYOUT} package has exactly one "
                f"jit/<stem>.py table next to csrc/<stem>/, found {[t[0] for t in tables]}"
            )
        self.table_path, self.stem = tables[0]
        self.name = f"{upstream_name}_{self.stem}"
        self.source_root = self.vendor_dir
        self.include_dirs = (self.vendor_dir / "csrc", self.vendor_dir / "include")
        self.vendored_files = MappingProxyType({
            path: entry for path, entry in files.items()
            if path == self.table_path or path.startswith(_INTEGRITY_PREFIXES)
        })
        table = read_table_literals(self.vendor_dir / self.table_path)
        self.hidden_set = self._read_hidden(table["HIDDEN_SIZES"])
        self.arch_by_capability = self._read_capabilities(table["ARCH_BY_CAPABILITY"])
        self.modules = self._read_modules(table["MODULES"], files)
        self.routes = self._read_routes(table["ROUTES"])
        self._route_index = {
            (arch, int(m.group(3)), m.group(1), bool(m.group(2))): names
            for arch, table_routes in self.routes.items()
            for key, names in table_routes.items()
            for m in [_ROUTE_KEY_RE.match(key)]
        }

    # ---- table parsing ------------------------------------------------------------------
    def _bad(self, problem: str) -> UnsupportedLayoutError:
        return UnsupportedLayoutError(f"package {self.name!r} ({self.table_path}): {problem}")

    def _read_hidden(self, raw: Any) -> tuple[int, ...]:
        if not isinstance(raw, (tuple, list)) or not raw or not all(
            isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in raw
        ):
            raise self._bad(f"HIDDEN_SIZES must be a non-empty tuple of positive ints, got {raw!r}")
        return tuple(sorted(set(raw)))

    def _read_capabilities(self, raw: Any) -> Mapping[tuple[int, int], str]:
        if not isinstance(raw, dict):
            raise self._bad(f"ARCH_BY_CAPABILITY must be a dict, got {type(raw).__name__}")
        out = {}
        for cc, arch in raw.items():
            if (not isinstance(cc, tuple) or len(cc) != 2
                    or not all(isinstance(v, int) for v in cc) or not isinstance(arch, str)):
                raise self._bad(f"ARCH_BY_CAPABILITY entry {cc!r}: {arch!r} is not "
                                "(major, minor) -> 'sm_XYZa'")
            out[cc] = arch
        return MappingProxyType(out)

    def _read_modules(
        self, raw: Any, files: Mapping[str, Any]
    ) -> Mapping[str, ModuleRecord]:
        if not isinstance(raw, dict) or not raw:
            raise self._bad("MODULES must be a non-empty dict")
        modules = {}
        for name, record_raw in raw.items():
            try:
                record = ModuleRecord.from_mapping(self.name, name, record_raw)
            except RecordError as exc:
                raise self._bad(str(exc)) from exc
            for source in record.sources:
                if not source.startswith(f"csrc/{self.stem}/"):
                    raise self._bad(f"module {name!r}: source {source!r} lies outside "
                                    f"csrc/{self.stem}/")
                if source not in files:
                    raise self._bad(f"module {name!r}: source {source!r} is not vendored "
                                    "(absent from VENDORED.json)")
            if record.hidden is None or record.hidden not in self.hidden_set:
                raise self._bad(f"module {name!r}: hidden {record.hidden!r} is not one of "
                                f"HIDDEN_SIZES {self.hidden_set}")
            modules[name] = record
        return MappingProxyType(modules)

    def _read_routes(self, raw: Any) -> Mapping[str, Mapping[str, tuple[str, ...]]]:
        if not isinstance(raw, dict):
            raise self._bad(f"ROUTES must be a dict, got {type(raw).__name__}")
        routes = {}
        for arch, table in raw.items():
            if arch not in self.arch_by_capability.values():
                raise self._bad(f"ROUTES arch {arch!r} has no compute capability in "
                                "ARCH_BY_CAPABILITY")
            if not isinstance(table, dict):
                raise self._bad(f"ROUTES[{arch!r}] must be a dict")
            arch_routes = {}
            for key, names in table.items():
                match = _ROUTE_KEY_RE.match(key) if isinstance(key, str) else None
                if match is None:
                    raise self._bad(f"ROUTES[{arch!r}] key {key!r} is not "
                                    "<fwd|bwd>[_residual]_h<H>")
                hidden = int(match.group(3))
                if hidden not in self.hidden_set:
                    raise self._bad(f"ROUTES[{arch!r}][{key!r}]: hidden {hidden} is not in "
                                    f"HIDDEN_SIZES {self.hidden_set}")
                if not isinstance(names, (list, tuple)) or not names:
                    raise self._bad(f"ROUTES[{arch!r}][{key!r}] must be a non-empty list")
                for name in names:
                    record = self.modules.get(name)
                    if record is None:
                        raise self._bad(f"ROUTES[{arch!r}][{key!r}] names unknown module "
                                        f"{name!r}")
                    if arch not in record.arches:
                        raise self._bad(f"ROUTES[{arch!r}][{key!r}]: module {name!r} is not "
                                        f"built for {arch} (arches {record.arches})")
                    if record.hidden != hidden:
                        raise self._bad(f"ROUTES[{arch!r}][{key!r}]: module {name!r} has "
                                        f"hidden {record.hidden}")
                arch_routes[key] = tuple(names)
            routes[arch] = MappingProxyType(arch_routes)
        return MappingProxyType(routes)

    # ---- CakePackage hooks --------------------------------------------------------------
    def hidden_sizes(self, arch: str | None = None) -> str:
        """Hidden sizes with at least one route (on ``arch`` if given), e.g. ``512, 2048``."""
        arches = [arch] if arch is not None else list(self.routes)
        found = sorted({
            int(_ROUTE_KEY_RE.match(key).group(3))
            for a in arches for key in self.routes.get(a, {})
        })
        return ", ".join(str(h) for h in found) or "none"

    def supported_hidden(self, arch: str) -> tuple[int, ...]:
        """Hidden sizes with any route on ``arch``."""
        return tuple(
            sorted({int(_ROUTE_KEY_RE.match(k).group(3)) for k in self.routes.get(arch, {})})
        )

    def _route_names(
        self, arch: str, hidden: int, kind: str, residual: bool
    ) -> tuple[str, ...] | None:
        return self._route_index.get((arch, hidden, kind, bool(residual)))

    def _support_problem(self, call: CallSpec) -> str | None:
        if call.x_dtype != "bfloat16" or call.w_dtype != "bfloat16":
            return (f"only bfloat16 x and w are served, got x={call.x_dtype} "
                    f"w={call.w_dtype}")
        if call.contracts != ("default",):
            return f"only the default rounding contract is served, got {list(call.contracts)}"
        if call.kind not in UPSTREAM_KINDS:
            return (f"kind {call.kind!r} is not served (kinds: {', '.join(UPSTREAM_KINDS)}); "
                    "use the deterministic 'bwd'")
        if call.hidden not in self.hidden_set:
            return (f"hidden {call.hidden} is not served (hidden sizes: "
                    f"{', '.join(map(str, self.hidden_set))})")
        return None
