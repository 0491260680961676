"""Find every Cake package: vendored ops (VENDORED.json) first, then first-party build.json.

Each vendored op's layout is decided from VENDORED.json's ``layout`` field checked against the
files it lists. Only ``table-0.7`` has a vendored adapter; the newer upstream
``cake_rmsnorm_*_backend`` packages (``build.json`` + ``cake_windows.py`` / ``cake_jit.py``)
are recognised as ``backend-packages`` and refused, like any unknown layout, with an
``UnsupportedLayoutError`` naming the op, its packages and the supported layouts.

Results are cached per process, keyed on the manifest file's (path, mtime_ns, size), the
``MILES_EXT_KERNELS_VENDOR_DIR`` variable and the first-party build.json files' stats.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    VENDOR_DIR_ENV,
    Manifest,
    OpEntry,
    default_vendor_dir,
    load_manifest,
)
from miles_ext_kernels.cake.packages import build_json, upstream_table
from miles_ext_kernels.cake.packages.base import CakePackage, UnsupportedLayoutError

BACKEND_PACKAGES_LAYOUT = "backend-packages"
CUSTOM_LAYOUT = "custom"
VENDORED_LAYOUTS: tuple[str, ...] = (upstream_table.LAYOUT,)
SUPPORTED_LAYOUTS: tuple[str, ...] = (upstream_table.LAYOUT, build_json.LAYOUT)
_BACKEND_MARKERS = frozenset({"cake_windows.py", "cake_jit.py"})
FIRST_PARTY_ROOT = Path(__file__).resolve().parents[2] / "kernels"

_CacheKey = tuple[Any, ...]
_CACHE: dict[_CacheKey, tuple[CakePackage, ...]] = {}


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


def _vendored_packages(vendor_dir: Path, manifest: Manifest) -> list[CakePackage]:
    packages: list[CakePackage] = []
    for op, entry in sorted(manifest.ops.items()):
        vendored_layout(op, entry)
        packages.append(upstream_table.UpstreamTablePackage(
            vendor_dir, op, entry.files(),
            upstream_name=manifest.upstream.name,
            object_format=manifest.upstream.object_format,
        ))
    return packages


def discover_packages(
    vendor_dir: str | os.PathLike[str] | None = None,
    *,
    include_first_party: bool = True,
) -> list[CakePackage]:
    """Every package: vendored ops of ``vendor_dir`` (default ``default_vendor_dir()``), then
    the first-party ``build.json`` packages. Raises ``UnsupportedLayoutError`` on a vendored op
    of an unsupported layout or a malformed package file; a missing VENDORED.json means no
    vendored packages."""
    vendor = Path(vendor_dir) if vendor_dir is not None else default_vendor_dir()
    first_party = first_party_build_files() if include_first_party else []
    key: _CacheKey = (
        _stat_key(vendor / MANIFEST_NAME),
        os.environ.get(VENDOR_DIR_ENV),
        tuple(_stat_key(p) for p in first_party),
    )
    cached = _CACHE.get(key)
    if cached is None:
        manifest = load_manifest(vendor)
        found: list[CakePackage] = []
        if manifest is not None:
            found.extend(_vendored_packages(vendor, manifest))
        found.extend(build_json.BuildJsonPackage(path) for path in first_party)
        cached = _CACHE[key] = tuple(found)
    return list(cached)


def clear_discovery_cache() -> None:
    """Forget cached discovery results (tests, or after re-vendoring in-process)."""
    _CACHE.clear()
