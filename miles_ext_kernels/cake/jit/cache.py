"""On-disk cache of built modules: content keys, per-key cross-process locks, atomic publish.

Layout: ``<cache root>/<name>-<key[:32]>/{module.so,meta.json}``. An entry is published by
building into a temporary directory inside the cache root and renaming it into place with
``os.replace``, so readers see either no entry or a complete one. A loaded entry is checked
against its metadata (size and sha256 of the .so); a truncated or corrupt entry is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

CACHE_ENV = "MILES_EXT_KERNELS_CACHE"
CACHE_FORMAT_VERSION = 1
SO_NAME = "module.so"
META_NAME = "meta.json"
LOCK_DIR = ".locks"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.]+")


def cache_root() -> Path:
    """``$MILES_EXT_KERNELS_CACHE`` or ``~/.cache/miles_ext_kernels``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "miles_ext_kernels"


def cache_key(
    *,
    arch: str,
    source_digests: Mapping[str, str],
    header_digest: str,
    nvcc_flags: Sequence[str],
    link_flags: Sequence[str],
    nvcc_version: str,
    host_compiler: str,
    tvm_ffi_version: str,
) -> str:
    """sha256 over every input that changes the built bytes, plus the cache format version."""
    material = {
        "format": CACHE_FORMAT_VERSION,
        "arch": arch,
        "sources": dict(sorted(source_digests.items())),
        "headers": header_digest,
        "nvcc_flags": list(nvcc_flags),
        "link_flags": list(link_flags),
        "nvcc": nvcc_version,
        "host_compiler": host_compiler,
        "tvm_ffi": tvm_ffi_version,
    }
    blob = json.dumps(material, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """One cache slot: a readable name (e.g. the module's cache_name) and its content key."""

    root: Path
    name: str
    key: str

    @property
    def directory(self) -> Path:
        """Directory of the published entry."""
        safe = _SAFE_NAME.sub("_", self.name) or "module"
        return self.root / f"{safe}-{self.key[:32]}"

    @property
    def so_path(self) -> Path:
        """The published shared object."""
        return self.directory / SO_NAME

    @property
    def meta_path(self) -> Path:
        """The published metadata JSON."""
        return self.directory / META_NAME

    @property
    def lock_path(self) -> Path:
        """Cross-process lock file of this key."""
        return self.root / LOCK_DIR / f"{self.directory.name}.lock"


@dataclass(frozen=True)
class CacheResult:
    """Where the .so is, and whether this call built it."""

    so_path: Path
    built: bool
    seconds: float


def read_valid(entry: CacheEntry) -> Path | None:
    """The entry's .so when its metadata matches (key, size, sha256); otherwise None."""
    try:
        meta = json.loads(entry.meta_path.read_text())
        stat = entry.so_path.stat()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT_VERSION:
        return None
    if meta.get("key") != entry.key or meta.get("so_size") != stat.st_size:
        return None
    if meta.get("so_sha256") != file_sha256(entry.so_path):
        return None
    return entry.so_path


def _discard(path: Path, root: Path) -> None:
    """Move ``path`` aside (one rename) and delete it; readers never see a half-deleted entry."""
    if not path.exists():
        return
    trash = root / f".trash-{uuid.uuid4().hex}"
    os.replace(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


def get_or_build(
    entry: CacheEntry,
    build: Callable[[Path], None],
    *,
    metadata: Mapping[str, object] | None = None,
) -> CacheResult:
    """Return the entry's .so, building it once across processes when absent or corrupt.

    ``build(out)`` must write the shared object at ``out`` (inside a private temporary
    directory of the cache root). The first caller takes the key's file lock and builds; the
    others wait on the lock and then load what it published.
    """
    start = time.perf_counter()
    found = read_valid(entry)
    if found is not None:
        return CacheResult(found, False, time.perf_counter() - start)
    entry.lock_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(entry.lock_path)):
        found = read_valid(entry)
        if found is not None:
            return CacheResult(found, False, time.perf_counter() - start)
        work = Path(tempfile.mkdtemp(prefix=f".tmp-{entry.directory.name}-", dir=entry.root))
        os.chmod(work, 0o755)
        try:
            build(work / SO_NAME)
            so = work / SO_NAME
            if not so.is_file():
                raise RuntimeError(f"the build of {entry.name} wrote no shared object at {so}")
            meta = dict(metadata or {})
            meta.update(
                format=CACHE_FORMAT_VERSION,
                key=entry.key,
                name=entry.name,
                so_size=so.stat().st_size,
                so_sha256=file_sha256(so),
                built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            )
            (work / META_NAME).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
            _discard(entry.directory, entry.root)
            os.replace(work, entry.directory)
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
    return CacheResult(entry.so_path, True, time.perf_counter() - start)
