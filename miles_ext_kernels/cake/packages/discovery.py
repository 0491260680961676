"""Find every Cake package: vendored ops (VENDORED.json) first, then first-party build.json.

Each vendored op's layout is decided from VENDORED.json's ``layout`` field checked against the
files it lists. Only ``table-0.7`` has a vendored adapter; the newer upstream
``cake_rmsnorm_*_backend`` packages (``build.json`` + ``cake_windows.py`` / ``cake_jit.py``)
are recognised as ``backend-packages`` and refused, like any unknown layout, with an
``UnsupportedLayoutError`` naming the op, its packages and the supported layouts.

A vendored op that cannot be loaded (an unsupported layout, a malformed or missing table), or
a VENDORED.json that cannot be read at all, is a :class:`VendoredProblem` of :func:`discover`:
the other packages are still found. :func:`discover_packages` raises the first problem's error
unless ``skip_broken=True``; the dispatcher skips broken vendored ops with a warning outside
strict mode.

Results are cached per process, keyed on the manifest file's (path, mtime_ns, size), the
``MILES_EXT_KERNELS_VENDOR_DIR`` variable and the first-party build.json files' stats (a
discovery with problems is not cached, so a repaired tree is picked up on the next call).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    VENDOR_DIR_ENV,
    Manifest,
    ManifestError,
    OpEntry,
    default_vendor_dir,
    load_manifest,
)
from miles_ext_kernels.cake.packages import build_json, upstream_table
from miles_ext_kernels.cake.packages.base import (
    CakePackage,
    CakePackageError,
    UnsupportedLayoutError,
    VendoredPackageError,
)
from miles_ext_kernels.cake.packages.records import RecordError

BACKEND_PACKAGES_LAYOUT = "backend-packages"
CUSTOM_LAYOUT = "custom"
VENDORED_LAYOUTS: tuple[str, ...] = (upstream_table.LAYOUT,)
SUPPORTED_LAYOUTS: tuple[str, ...] = (upstream_table.LAYOUT, build_json.LAYOUT)
_BACKEND_MARKERS = frozenset({"cake_windows.py", "cake_jit.py"})
FIRST_PARTY_ROOT = Path(__file__).resolve().parents[2] / "kernels"

VERIFY_HINT = ("run `python tools/vendor_cake.py verify` to check the vendored files, then "
               "re-vendor the op (`python tools/vendor_cake.py fi --checkout ... --commit ... "
               "--op {op}`)")
# What loading a vendored op or its manifest may raise (anything else is a bug, not bad data).
_LOAD_ERRORS: tuple[type[Exception], ...] = (ManifestError, CakePackageError, RecordError,
                                             OSError)


@dataclass(frozen=True)
class VendoredProblem:
    """A vendored op (``op``), or the whole VENDORED.json (``op`` None), that cannot be loaded."""

    manifest: Path
    op: str | None
    error: Exception

    @property
    def message(self) -> str:
        """What is wrong, where, and what to do about it."""
        if self.op is None:
            what = f"the vendored ops of {self.manifest}"
        else:
            what = f"vendored op {self.op!r} of {self.manifest}"
        hint = VERIFY_HINT.format(op=self.op or "<op>")
        return f"cannot load {what}: {self.error}; {hint}"

    def as_error(self) -> VendoredPackageError:
        """The problem as a :class:`VendoredPackageError` (``raise ... from problem.error``)."""
        return VendoredPackageError(self.message, manifest=self.manifest, op=self.op)


@dataclass(frozen=True)
class Discovery:
    """The packages found (vendored first, then first-party) and the vendored problems."""

    packages: tuple[CakePackage, ...]
    problems: tuple[VendoredProblem, ...] = ()


_CacheKey = tuple[Any, ...]
_CACHE: dict[_CacheKey, Discovery] = {}


def _stat_key(path: Path) -> tuple[str, int | None, int | None]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (str(path), None, None)
    return (str(path), st.st_mtime_ns, st.st_size)


def first_party_build_files(root: Path | None = None) -> list[Path]:
    """``build.json`` of every first-party package (``miles_ext_kernels/kernels/*/build.json``)."""
    base = FIRST_PARTY_ROOT if root is None else Path(root)
    return sorted(base.glob(f"*/{build_json.BUILD_JSON}"))


def detect_layout(files: Mapping[str, Any]) -> str:
    """Layout the vendored ``files`` (vendor-relative paths) look like, or ``"unknown"``."""
    names_by_dir: dict[str, set[str]] = {}
    for path in files:
        parent, _, name = path.rpartition("/")
        names_by_dir.setdefault(parent, set()).add(name)
    if any(build_json.BUILD_JSON in names and names & _BACKEND_MARKERS
           for names in names_by_dir.values()):
        return BACKEND_PACKAGES_LAYOUT
    if upstream_table.find_table_files(files):
        return upstream_table.LAYOUT
    return "unknown"


def _refuse(op: str, entry: OpEntry, layout: str, why: str) -> UnsupportedLayoutError:
    packages = ", ".join(p.upstream_path for p in entry.packages) or "no packages"
    hint = ""
    if layout == BACKEND_PACKAGES_LAYOUT:
        hint = (" (the newer upstream *_backend packages with build.json, cake_windows.py and "
                "cake_jit.py have no runtime adapter yet; vendor a table-0.7 commit such as "
                "flashinfer-python 0.7.2.post1)")
    return UnsupportedLayoutError(
        f"vendored op {op!r} ({packages}) has layout {layout!r}: {why}{hint}; supported "
        f"layouts: {', '.join(VENDORED_LAYOUTS)} (vendored), {build_json.LAYOUT} (first-party)"
    )


def vendored_layout(op: str, entry: OpEntry) -> str:
    """The supported layout of one vendored op, or ``UnsupportedLayoutError``.

    A recorded ``custom`` layout (packages named by hand) is accepted when its files have a
    supported layout; a recorded supported layout must agree with the files.
    """
    detected = detect_layout(entry.files())
    recorded = entry.layout
    if recorded not in VENDORED_LAYOUTS and recorded != CUSTOM_LAYOUT:
        raise _refuse(op, entry, recorded, "no adapter for this layout")
    if detected not in VENDORED_LAYOUTS:
        raise _refuse(op, entry, recorded, f"its files look like {detected!r}")
    if recorded != CUSTOM_LAYOUT and recorded != detected:
        raise _refuse(op, entry, recorded, f"its files look like {detected!r}")
    return detected


def _load_op(vendor_dir: Path, manifest: Manifest, op: str, entry: OpEntry) -> CakePackage:
    """The package of one vendored op (its layout checked first)."""
    vendored_layout(op, entry)
    return upstream_table.UpstreamTablePackage(
        vendor_dir, op, entry.files(),
        upstream_name=manifest.upstream.name,
        object_format=manifest.upstream.object_format,
    )


def _vendored(vendor_dir: Path) -> tuple[list[CakePackage], list[VendoredProblem]]:
    """The loadable vendored packages of ``vendor_dir`` and a problem for each op that is not."""
    path = vendor_dir / MANIFEST_NAME
    try:
        manifest = load_manifest(vendor_dir)
    except _LOAD_ERRORS as exc:
        return [], [VendoredProblem(path, None, exc)]
    if manifest is None:
        return [], []
    packages: list[CakePackage] = []
    problems: list[VendoredProblem] = []
    for op, entry in sorted(manifest.ops.items()):
        try:
            packages.append(_load_op(vendor_dir, manifest, op, entry))
        except _LOAD_ERRORS as exc:
            problems.append(VendoredProblem(path, op, exc))
    return packages, problems


def discover(
    vendor_dir: str | os.PathLike[str] | None = None,
    *,
    include_first_party: bool = True,
) -> Discovery:
    """Every loadable package (vendored ops of ``vendor_dir``, default ``default_vendor_dir()``,
    then the first-party ``build.json`` packages) and a :class:`VendoredProblem` for each
    vendored op, or the whole VENDORED.json, that cannot be loaded. A missing VENDORED.json
    means no vendored packages; a malformed first-party package file raises."""
    vendor = Path(vendor_dir) if vendor_dir is not None else default_vendor_dir()
    first_party = first_party_build_files() if include_first_party else []
    key: _CacheKey = (
        _stat_key(vendor / MANIFEST_NAME),
        os.environ.get(VENDOR_DIR_ENV),
        tuple(_stat_key(p) for p in first_party),
    )
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    packages, problems = _vendored(vendor)
    packages.extend(build_json.BuildJsonPackage(path) for path in first_party)
    found = Discovery(tuple(packages), tuple(problems))
    if not problems:
        _CACHE[key] = found
    return found


def discover_packages(
    vendor_dir: str | os.PathLike[str] | None = None,
    *,
    include_first_party: bool = True,
    skip_broken: bool = False,
) -> list[CakePackage]:
    """Every package: vendored ops of ``vendor_dir`` (default ``default_vendor_dir()``), then
    the first-party ``build.json`` packages. Raises the error of the first vendored op that
    cannot be loaded (``UnsupportedLayoutError`` for an unsupported layout or a malformed
    package file, ``ManifestError`` for an unreadable VENDORED.json) unless ``skip_broken``,
    which leaves such ops out (:func:`discover` lists them); a missing VENDORED.json means no
    vendored packages."""
    found = discover(vendor_dir, include_first_party=include_first_party)
    if found.problems and not skip_broken:
        raise found.problems[0].error
    return list(found.packages)


def clear_discovery_cache() -> None:
    """Forget cached discovery results (tests, or after re-vendoring in-process)."""
    _CACHE.clear()
