"""Integrity checks before the first build of a module: fail closed, name the file.

* Every file named in the record's ``source_sha256`` (its sources, and for first-party
  packages the headers it lists) hashes to the recorded sha256.
* For vendored packages, every vendored file the build reads (the module's own sources and
  every vendored file that is no module's source: the headers under ``csrc/`` and
  ``include/`` and the table) has the git blob id recorded in VENDORED.json, so a table
  edited together with a source is caught. Another module's edited source does not block
  this module.
* A missing file, a symlink where a regular file is expected, or a path escaping its root is
  an ``IntegrityError``.

File digests are memoised per (path, size, mtime_ns, object format).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from miles_ext_kernels.cake.manifest import MODE_SYMLINK, git_blob_id

_DIGESTS: dict[tuple[str, int, int, str], tuple[str, str]] = {}


class IntegrityError(RuntimeError):
    """A source or vendored file does not match its recorded digest (or is missing)."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.expected = expected
        self.found = found


def _regular_file(path: Path, what: str) -> os.stat_result:
    try:
        st = path.lstat()
    except FileNotFoundError:
        raise IntegrityError(f"{what} {path} is missing", path=path) from None
    if stat.S_ISLNK(st.st_mode):
        raise IntegrityError(f"{what} {path} is a symlink where a regular file is expected "
                             f"(-> {os.readlink(path)})", path=path)
    if not stat.S_ISREG(st.st_mode):
        raise IntegrityError(f"{what} {path} is not a regular file", path=path)
    return st


def file_digests(path: Path, object_format: str = "sha1") -> tuple[str, str]:
    """``(sha256, git blob id)`` of a regular file, memoised per (path, size, mtime_ns)."""
    st = _regular_file(path, "file")
    key = (str(path), st.st_size, st.st_mtime_ns, object_format)
    cached = _DIGESTS.get(key)
    if cached is None:
        data = path.read_bytes()
        cached = (hashlib.sha256(data).hexdigest(), git_blob_id(data, object_format))
        _DIGESTS[key] = cached
    return cached


def clear_digest_cache() -> None:
    """Forget memoised file digests."""
    _DIGESTS.clear()


def _check_inside(path: Path, root: Path, what: str) -> None:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        raise IntegrityError(f"{what} {path} resolves outside {root}", path=path) from None


def _mismatch(what: str, path: Path, kind: str, expected: str, found: str) -> IntegrityError:
    return IntegrityError(
        f"{what} {path} does not match its recorded {kind}: expected {expected}, found {found}",
        path=path, expected=expected, found=found,
    )


def _verify_vendored_file(vendor_dir: Path, rel: str, entry: Any, object_format: str) -> None:
    path = vendor_dir.joinpath(*rel.split("/"))
    if entry.mode == MODE_SYMLINK:
        if not path.is_symlink():
            raise IntegrityError(f"vendored file {path} should be a symlink (VENDORED.json "
                                 "mode 120000)", path=path)
        found = git_blob_id(os.fsencode(os.readlink(path)), object_format)
    else:
        found = file_digests(path, object_format)[1]
        _check_inside(path, vendor_dir, "vendored file")
    if found != entry.blob:
        raise _mismatch("vendored file", path, "git blob id (VENDORED.json)", entry.blob, found)


def vendored_build_inputs(package: Any, record: Any) -> list[str]:
    """Vendor-relative paths of the vendored files a build of ``record`` reads: its own
    sources plus every vendored file that is no module's source (headers, the table).

    Empty for first-party packages (``vendored_files`` is None).
    """
    files: Mapping[str, Any] | None = package.vendored_files
    if files is None:
        return []
    vendor_dir = Path(package.vendor_dir)
    root = Path(package.source_root)

    def vendor_rel(rel: str) -> str:
        return root.joinpath(*rel.split("/")).relative_to(vendor_dir).as_posix()

    any_source = {vendor_rel(rel) for other in package.modules.values() for rel in other.sources}
    own = {vendor_rel(rel) for rel in record.sources}
    return sorted(rel for rel in files if rel in own or rel not in any_source)


def verify_vendored_files(package: Any, record: Any) -> None:
    """Check the vendored files a build of ``record`` reads against VENDORED.json blob ids."""
    vendor_dir = Path(package.vendor_dir) if package.vendored_files is not None else None
    for rel in vendored_build_inputs(package, record):
        _verify_vendored_file(vendor_dir, rel, package.vendored_files[rel],
                              package.object_format)


def verify_module_sources(package: Any, record: Any) -> list[Path]:
    """Verify ``record``'s sources (sha256) and the package's vendored files (blob ids).

    Returns the absolute source paths in record order. Raises ``IntegrityError`` naming the
    file, the expected and the found digest on any mismatch, missing file or symlink.
    """
    if package.modules.get(record.name) != record:
        raise ValueError(f"module {record.name!r} is not a module of package {package.name!r}")
    root = Path(package.source_root)
    vendored = package.vendored_files
    paths = []
    for rel in record.sources:
        path = package.source_path(rel)
        sha256 = file_digests(path, package.object_format)[0]
        _check_inside(path, root, f"source of module {record.name}")
        expected = record.source_sha256[rel]
        if sha256 != expected:
            raise _mismatch(f"source of module {record.name}", path, "sha256", expected, sha256)
        if vendored is not None:
            vendor_rel = path.relative_to(Path(package.vendor_dir)).as_posix()
            if vendor_rel not in vendored:
                raise IntegrityError(f"source {path} of module {record.name} is not recorded "
                                     "in VENDORED.json", path=path)
        paths.append(path)
    for rel in sorted(set(record.source_sha256) - set(record.sources)):
        path = package.source_path(rel)
        sha256 = file_digests(path, package.object_format)[0]
        _check_inside(path, root, f"header of module {record.name}")
        if sha256 != record.source_sha256[rel]:
            raise _mismatch(f"header of module {record.name}", path, "sha256",
                            record.source_sha256[rel], sha256)
    verify_vendored_files(package, record)
    return paths
