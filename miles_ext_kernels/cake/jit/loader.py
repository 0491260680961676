"""Build-or-load one (package, module record, arch) and hand back its tvm-ffi module.

``load_module`` is memoised per process: integrity is checked (sources against the record's
sha256 and, for vendored packages, VENDORED.json) before the first build or load of a module
in this process; later calls return the same module object.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .build import BuildSpec, build_shared_object
from .cache import CacheEntry, cache_key, cache_root, get_or_build
from .flags import module_nvcc_flags
from .toolchain import Toolchain, probe_toolchain, tvm_ffi_include_dir, tvm_ffi_version

JOBS_ENV = "MILES_EXT_KERNELS_JOBS"
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".inc", ".inl")


class EntryError(LookupError):
    """A built module does not export the record's ``ffi_entry``."""


@dataclass(frozen=True)
class BuildOutcome:
    """Result of :func:`ensure_built`: the .so, whether this call compiled it, and how long."""

    module: str
    arch: str
    so_path: Path
    built: bool
    seconds: float


def default_jobs() -> int:
    """Parallel compiles per module: ``$MILES_EXT_KERNELS_JOBS`` or min(2, CPU count)."""
    configured = os.environ.get(JOBS_ENV)
    if configured:
        try:
            value = int(configured)
        except ValueError:
            raise ValueError(f"{JOBS_ENV}={configured!r} is not an integer") from None
        if value < 1:
            raise ValueError(f"{JOBS_ENV} must be >= 1, got {value}")
        return value
    return max(1, min(2, os.cpu_count() or 1))


def _record_name(record: Any) -> str:
    return str(getattr(record, "name", None) or record.kernel)


def _include_dirs(package: Any) -> tuple[Path, ...]:
    dirs = [tvm_ffi_include_dir(), *(Path(d) for d in package.include_dirs),
            Path(package.source_root)]
    unique: list[Path] = []
    for directory in dirs:
        if directory not in unique:
            unique.append(directory)
    return tuple(unique)


_HEADER_DIGESTS: dict[tuple[Path, ...], str] = {}


def _iter_headers(directories: Iterable[Path]) -> Iterable[tuple[str, Path]]:
    for index, directory in enumerate(directories):
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*")):
            if path.suffix in HEADER_SUFFIXES and path.is_file():
                yield f"{index}/{path.relative_to(directory).as_posix()}", path


def header_digest(directories: tuple[Path, ...]) -> str:
    """sha256 over the headers (name + content) found in ``directories`` (memoised per process)."""
    cached = _HEADER_DIGESTS.get(directories)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    for name, path in _iter_headers(directories):
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    _HEADER_DIGESTS[directories] = digest.hexdigest()
    return _HEADER_DIGESTS[directories]


def build_spec(
    package: Any, record: Any, arch: str, sources: Iterable[Path],
    toolchain: Toolchain | None = None,
) -> BuildSpec:
    """The BuildSpec of ``record`` for ``arch`` (checks flags and that nvcc can target arch)."""
    flags = module_nvcc_flags(record, arch)
    toolchain = toolchain or probe_toolchain()
    toolchain.require_arch(arch)
    return BuildSpec(
        module=_record_name(record),
        arch=arch,
        sources=tuple(Path(s) for s in sources),
        include_dirs=_include_dirs(package),
        nvcc_flags=tuple(flags),
        toolchain=toolchain,
    )


def cache_entry_for(package: Any, record: Any, spec: BuildSpec) -> CacheEntry:
    """Cache slot of ``spec``; its key covers sources, headers, flags and tool versions."""
    tvm_include = tvm_ffi_include_dir()
    own_includes = tuple(d for d in spec.include_dirs if d != tvm_include)
    key = cache_key(
        arch=spec.arch,
        source_digests=dict(record.source_sha256),
        header_digest=header_digest(own_includes),
        nvcc_flags=spec.nvcc_flags,
        link_flags=spec.link_flags,
        nvcc_version=spec.toolchain.version,
        host_compiler=spec.toolchain.host_compiler,
        tvm_ffi_version=tvm_ffi_version(),
    )
    name = dict(record.cache_names).get(spec.arch) or f"{record.kernel}_{spec.arch}"
    return CacheEntry(root=cache_root(), name=name, key=key)


def verified_sources(package: Any, record: Any) -> list[Path]:
    """Check the record's sources (sha256 + VENDORED.json blob ids) and return their paths."""
    from miles_ext_kernels.cake import integrity

    return list(integrity.verify_module_sources(package, record))


def ensure_built(
    package: Any,
    record: Any,
    arch: str,
    *,
    jobs: int | None = None,
    slots: threading.Semaphore | None = None,
) -> BuildOutcome:
    """Verify the sources, then return the cached .so of (record, arch), building it if needed."""
    spec = build_spec(package, record, arch, verified_sources(package, record))
    entry = cache_entry_for(package, record, spec)
    workers = default_jobs() if jobs is None else int(jobs)
    metadata = {
        "module": spec.module,
        "kernel": record.kernel,
        "arch": arch,
        "package": str(getattr(package, "name", "")),
        "nvcc": spec.toolchain.version,
        "tvm_ffi": tvm_ffi_version(),
        "nvcc_flags": list(spec.nvcc_flags),
        "link_flags": list(spec.link_flags),
        "sources": dict(sorted(record.source_sha256.items())),
        "builder_pid": os.getpid(),
    }

    def build(out: Path) -> None:
        build_shared_object(spec, out, jobs=workers, slots=slots)

    result = get_or_build(entry, build, metadata=metadata)
    return BuildOutcome(spec.module, arch, result.so_path, result.built, result.seconds)


_MODULES: dict[tuple[str, str, str, str], Any] = {}
_MODULES_LOCK = threading.RLock()


def _memo_key(package: Any, record: Any, arch: str) -> tuple[str, str, str, str]:
    return (str(package.source_root), str(getattr(package, "name", "")), _record_name(record),
            arch)


def load_module(package: Any, record: Any, arch: str) -> Any:
    """The tvm-ffi module of ``record`` built for ``arch`` (built on first use, then memoised)."""
    key = _memo_key(package, record, arch)
    module = _MODULES.get(key)
    if module is not None:
        return module
    with _MODULES_LOCK:
        module = _MODULES.get(key)
        if module is None:
            import tvm_ffi

            outcome = ensure_built(package, record, arch)
            module = tvm_ffi.load_module(str(outcome.so_path))
            _MODULES[key] = module
    return module


def resolve_entry(module: Any, record: Any) -> Any:
    """The record's ``ffi_entry`` function of a loaded module (``EntryError`` if absent)."""
    name = record.ffi_entry
    try:
        return module.get_function(name)
    except (AttributeError, RuntimeError) as exc:
        raise EntryError(
            f"module {_record_name(record)} exports no function {name!r} (ffi_entry)"
        ) from exc


def clear_loaded_modules() -> None:
    """Forget memoised modules (the shared objects stay loaded in the process)."""
    with _MODULES_LOCK:
        _MODULES.clear()


def describe_outcome(outcome: BuildOutcome) -> str:
    """One-line JSON description of a build outcome (CLI and logs)."""
    return json.dumps({"module": outcome.module, "arch": outcome.arch, "built": outcome.built,
                       "seconds": round(outcome.seconds, 3), "so": str(outcome.so_path)})
