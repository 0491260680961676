"""VENDORED.json: the record of every vendored upstream file, and offline verification.

Shared by the vendoring tool (``tools/cake_vendor``) and the runtime. Standard library only:
the runtime must not need GitPython. The schema is described in ``docs/architecture.md`` and
``docs/vendoring.md``.

Every vendored file is recorded under a POSIX path relative to the vendor directory with its
git blob id (``sha1("blob <size>\\0" + bytes)``, or SHA-256 for SHA-256 repositories), its git
mode (``100644``, ``100755`` or ``120000`` for a symlink, whose "content" is its target string),
its size and its sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_NAME = "VENDORED.json"
SCHEMA_VERSION = 1
VENDOR_DIR_ENV = "MILES_EXT_KERNELS_VENDOR_DIR"

#: Files and directories the tool itself keeps in the vendor directory (never op files).
GITATTRIBUTES_NAME = ".gitattributes"
GITIGNORE_NAME = ".gitignore"
LOCK_NAME = ".vendor.lock"
TXN_DIR_NAME = ".vendor-txn"
TOOL_FILES = frozenset({MANIFEST_NAME, GITATTRIBUTES_NAME, GITIGNORE_NAME, LOCK_NAME})
TOOL_DIRS = frozenset({TXN_DIR_NAME})
#: Directory names never reported as extra (Python byte-code caches written by installers).
IGNORED_DIR_NAMES = frozenset({"__pycache__"})

MODE_FILE = "100644"
MODE_EXECUTABLE = "100755"
MODE_SYMLINK = "120000"
FILE_MODES = frozenset({MODE_FILE, MODE_EXECUTABLE, MODE_SYMLINK})
_OBJECT_FORMATS = {"sha1": hashlib.sha1, "sha256": hashlib.sha256}


class ManifestError(ValueError):
    """VENDORED.json is unreadable or does not follow the schema."""


def default_vendor_dir() -> Path:
    """The vendor dir: ``$MILES_EXT_KERNELS_VENDOR_DIR`` if set, else the package's ``_vendor``."""
    configured = os.environ.get(VENDOR_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent / "_vendor"


def git_blob_id(data: bytes, object_format: str = "sha1") -> str:
    """Git blob id of raw ``data`` (no filters): hash of ``b"blob <size>\\0" + data``."""
    try:
        hasher = _OBJECT_FORMATS[object_format]()
    except KeyError:
        raise ValueError(
            f"object_format must be one of {sorted(_OBJECT_FORMATS)}, got {object_format!r}"
        ) from None
    hasher.update(b"blob %d\0" % len(data))
    hasher.update(data)
    return hasher.hexdigest()


@dataclass(frozen=True)
class FileEntry:
    """One vendored file: git blob id, git mode, size in bytes and sha256 of the content."""

    blob: str
    mode: str
    size: int
    sha256: str

    @classmethod
    def from_bytes(cls, data: bytes, mode: str, object_format: str = "sha1") -> FileEntry:
        """Describe ``data`` (a symlink's data is its target string) stored with ``mode``."""
        return cls(
            blob=git_blob_id(data, object_format),
            mode=mode,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
        )


@dataclass(frozen=True)
class PackageEntry:
    """One vendored package: an upstream directory (``type`` "tree") or single file ("blob")."""

    upstream_path: str
    vendored_path: str
    object_id: str
    type: str
    role: str = "source"
    files: dict[str, FileEntry] = field(default_factory=dict)


@dataclass(frozen=True)
class LicenseEntry:
    """The upstream license vendored with an op: SPDX id (or NOASSERTION) and its files."""

    spdx: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpEntry:
    """Everything vendored for one op from one upstream commit."""

    ref: str
    commit: str
    tree: str
    tool_version: str
    layout: str
    license: LicenseEntry | None
    packages: tuple[PackageEntry, ...] = ()

    def files(self) -> dict[str, FileEntry]:
        """All files of the op keyed by path relative to the vendor directory."""
        merged: dict[str, FileEntry] = {}
        for package in self.packages:
            merged.update(package.files)
        return merged


@dataclass(frozen=True)
class UpstreamInfo:
    """Where the vendored files come from (URL without credentials; None when unknown)."""

    name: str
    url: str | None
    object_format: str = "sha1"


@dataclass(frozen=True)
class Manifest:
    """The whole of VENDORED.json."""

    upstream: UpstreamInfo
    ops: dict[str, OpEntry] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def files(self, ops: Iterable[str] | None = None) -> dict[str, FileEntry]:
        """Files of ``ops`` (all ops when None) keyed by path relative to the vendor directory."""
        names = list(self.ops) if ops is None else list(ops)
        merged: dict[str, FileEntry] = {}
        for name in names:
            merged.update(self.ops[name].files())
        return merged

    def owners(self, path: str) -> tuple[str, ...]:
        """Names of the ops whose packages list ``path``."""
        return tuple(sorted(n for n, op in self.ops.items() if path in op.files()))


@dataclass(frozen=True)
class VerifyReport:
    """Result of :func:`verify_files`; each field is a sorted tuple of vendor-relative paths."""

    modified: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    mode_changed: tuple[str, ...] = ()
    checked: int = 0

    @property
    def clean(self) -> bool:
        """True when nothing was modified, missing, extra or changed mode."""
        return not (self.modified or self.missing or self.extra or self.mode_changed)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "clean": self.clean,
            "checked": self.checked,
            "modified": list(self.modified),
            "missing": list(self.missing),
            "extra": list(self.extra),
            "mode_changed": list(self.mode_changed),
        }


# --------------------------------------------------------------------------- (de)serialising


def manifest_to_dict(manifest: Manifest) -> dict:
    """Plain-JSON form of ``manifest`` (the exact structure written to VENDORED.json)."""
    ops = {}
    for name, op in manifest.ops.items():
        ops[name] = {
            "ref": op.ref,
            "commit": op.commit,
            "tree": op.tree,
            "tool_version": op.tool_version,
            "layout": op.layout,
            "license": None
            if op.license is None
            else {"spdx": op.license.spdx, "files": list(op.license.files)},
            "packages": [
                {
                    "upstream_path": p.upstream_path,
                    "vendored_path": p.vendored_path,
                    "object_id": p.object_id,
                    "type": p.type,
                    "role": p.role,
                    "files": {
                        path: {"blob": f.blob, "mode": f.mode, "size": f.size, "sha256": f.sha256}
                        for path, f in p.files.items()
                    },
                }
                for p in op.packages
            ],
        }
    return {
        "schema": manifest.schema,
        "upstream": {
            "name": manifest.upstream.name,
            "url": manifest.upstream.url,
            "object_format": manifest.upstream.object_format,
        },
        "ops": ops,
    }


def dump_manifest(manifest: Manifest) -> bytes:
    """Serialise ``manifest``: sorted keys, indent 2, LF line ends, trailing newline, UTF-8."""
    text = json.dumps(manifest_to_dict(manifest), sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


PACKAGE_ROLES = frozenset({"source", "license"})
PACKAGE_TYPES = frozenset({"tree", "blob"})
_MISSING = object()


def _type_names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "a list", str: "a string", int: "an integer"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _require_object(value: object, where: str) -> dict:
    """``value`` when it is a JSON object; else a ManifestError saying so."""
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _require(mapping: object, key: str, kind: type | tuple[type, ...], where: str):
    value = _require_object(mapping, where).get(key, _MISSING)
    if value is _MISSING:
        raise ManifestError(f"{where}: missing key {key!r}")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ManifestError(
            f"{where}.{key}: expected {_type_names(kind)}, got {type(value).__name__}"
        )
    return value


def _require_path(mapping: dict, key: str, where: str) -> str:
    """A string field that must be a safe relative POSIX path."""
    value = _require(mapping, key, str, where)
    _check_relative_path(value, f"{where}.{key}")
    return value


def _require_choice(mapping: dict, key: str, choices: frozenset[str], where: str,
                    default: str | None = None) -> str:
    """A string field restricted to ``choices`` (``default`` when absent, if given)."""
    if default is not None and key not in mapping:
        return default
    value = _require(mapping, key, str, where)
    if value not in choices:
        raise ManifestError(f"{where}.{key}: {value!r} is not one of {sorted(choices)}")
    return value


def _parse_file(path: str, raw: dict, where: str) -> FileEntry:
    entry = FileEntry(
        blob=_require(raw, "blob", str, where),
        mode=_require(raw, "mode", str, where),
        size=_require(raw, "size", int, where),
        sha256=_require(raw, "sha256", str, where),
    )
    if entry.mode not in FILE_MODES:
        raise ManifestError(f"{where}: mode {entry.mode!r} is not one of {sorted(FILE_MODES)}")
    _check_relative_path(path, where)
    return entry


def _check_relative_path(path: str, where: str) -> None:
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or "\0" in path
        or any(p in ("", ".", "..") or p.casefold() == ".git" for p in parts)
    ):
        raise ManifestError(f"{where}: unsafe path {path!r}")


def _parse_license(raw: object, where: str) -> LicenseEntry | None:
    """The ``license`` of an op (None when null)."""
    if raw is None:
        return None
    files = _require(raw, "files", list, where)
    for index, path in enumerate(files):
        if not isinstance(path, str):
            raise ManifestError(
                f"{where}.files[{index}]: expected a string, got {type(path).__name__}"
            )
        _check_relative_path(path, f"{where}.files[{index}]")
    return LicenseEntry(spdx=_require(raw, "spdx", str, where), files=tuple(files))


def _parse_package(raw: object, where: str) -> PackageEntry:
    """One entry of an op's ``packages``."""
    raw = _require_object(raw, where)
    files = {
        path: _parse_file(path, raw_file, f"{where}.files[{path!r}]")
        for path, raw_file in _require(raw, "files", dict, where).items()
    }
    return PackageEntry(
        upstream_path=_require_path(raw, "upstream_path", where),
        vendored_path=_require_path(raw, "vendored_path", where),
        object_id=_require(raw, "object_id", str, where),
        type=_require_choice(raw, "type", PACKAGE_TYPES, where),
        role=_require_choice(raw, "role", PACKAGE_ROLES, where, default="source"),
        files=files,
    )


def _parse_op(raw: object, where: str) -> OpEntry:
    """One entry of ``ops``."""
    raw = _require_object(raw, where)
    packages = tuple(
        _parse_package(raw_pkg, f"{where}.packages[{index}]")
        for index, raw_pkg in enumerate(_require(raw, "packages", list, where))
    )
    return OpEntry(
        ref=_require(raw, "ref", str, where),
        commit=_require(raw, "commit", str, where),
        tree=_require(raw, "tree", str, where),
        tool_version=_require(raw, "tool_version", str, where),
        layout=_require(raw, "layout", str, where),
        license=_parse_license(raw.get("license"), f"{where}.license"),
        packages=packages,
    )


def manifest_from_dict(raw: object, source: str = MANIFEST_NAME) -> Manifest:
    """Build a :class:`Manifest` from its JSON form, validating the schema."""
    raw = _require_object(raw, source)
    schema = _require(raw, "schema", int, source)
    if schema != SCHEMA_VERSION:
        raise ManifestError(
            f"{source}: schema {schema} is not supported (expected {SCHEMA_VERSION})"
        )
    up = _require(raw, "upstream", dict, source)
    url = up.get("url")
    if url is not None and not isinstance(url, str):
        raise ManifestError(f"{source}.upstream.url: expected a string or null")
    upstream = UpstreamInfo(
        name=_require(up, "name", str, f"{source}.upstream"),
        url=url,
        object_format=_require(up, "object_format", str, f"{source}.upstream"),
    )
    if upstream.object_format not in _OBJECT_FORMATS:
        raise ManifestError(f"{source}.upstream.object_format: {upstream.object_format!r} unknown")
    ops = {
        name: _parse_op(raw_op, f"{source}.ops.{name}")
        for name, raw_op in _require(raw, "ops", dict, source).items()
    }
    return Manifest(upstream=upstream, ops=ops, schema=schema)


def parse_manifest(data: bytes, source: str = MANIFEST_NAME) -> Manifest:
    """Parse the bytes of a VENDORED.json file."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{source}: not valid UTF-8 JSON ({exc})") from exc
    return manifest_from_dict(raw, source)


def load_manifest(vendor_dir: str | os.PathLike[str]) -> Manifest | None:
    """Read ``vendor_dir/VENDORED.json``; None when the file does not exist."""
    path = Path(vendor_dir) / MANIFEST_NAME
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return parse_manifest(data, str(path))


# --------------------------------------------------------------------------- verification


def read_vendored(path: Path) -> tuple[bytes, str] | None:
    """Raw content and git mode of a file on disk (a symlink yields its target); None if absent."""
    try:
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(path)), MODE_SYMLINK
    if not stat.S_ISREG(st.st_mode):
        return b"", "040000" if stat.S_ISDIR(st.st_mode) else "000000"
    mode = MODE_EXECUTABLE if st.st_mode & stat.S_IXUSR else MODE_FILE
    return path.read_bytes(), mode


def disk_path(vendor_dir: Path, rel: str) -> Path:
    """The on-disk location of the vendor-relative POSIX path ``rel``."""
    return vendor_dir.joinpath(*rel.split("/"))


def list_vendor_files(vendor_dir: Path, under: Iterable[str] = ("",)) -> list[str]:
    """Vendor-relative paths of every file/symlink below ``under`` (tool files, caches skipped)."""
    found: set[str] = set()
    for prefix in under:
        start = disk_path(vendor_dir, prefix) if prefix else vendor_dir
        if start.is_symlink() or start.is_file():
            found.add(prefix)
            continue
        for dirpath, dirnames, filenames in os.walk(start):
            rel_dir = Path(dirpath).relative_to(vendor_dir).as_posix()
            at_root = rel_dir == "."
            dirnames[:] = [
                d
                for d in dirnames
                if d not in IGNORED_DIR_NAMES
                and not (at_root and d in TOOL_DIRS)
                and not os.path.islink(os.path.join(dirpath, d))
            ]
            # symlinks to directories are files for our purpose
            linked = [d for d in os.listdir(dirpath) if os.path.islink(os.path.join(dirpath, d))]
            for name in set(filenames) | set(linked):
                if at_root and name in TOOL_FILES:
                    continue
                found.add(name if at_root else f"{rel_dir}/{name}")
    return sorted(found)


def _known_ops(manifest: Manifest, ops: Iterable[str] | None) -> list[str]:
    """``ops`` as a list (every op of ``manifest`` when None); KeyError naming unknown ones."""
    names = list(manifest.ops) if ops is None else list(ops)
    unknown = [n for n in names if n not in manifest.ops]
    if unknown:
        raise KeyError(f"ops not in {MANIFEST_NAME}: {', '.join(unknown)}")
    return names


def _package_roots(manifest: Manifest, names: Iterable[str]) -> list[str]:
    """The vendored paths of the packages of ops ``names`` (where their files lie)."""
    return sorted({p.vendored_path for n in names for p in manifest.ops[n].packages})


def verify_files(
    vendor_dir: str | os.PathLike[str],
    manifest: Manifest,
    ops: Iterable[str] | None = None,
) -> VerifyReport:
    """Re-hash vendored files against ``manifest`` (all ops, or only ``ops``).

    ``extra`` lists files below the checked packages' vendored paths (the whole vendor
    directory when ``ops`` is None) that no op of the manifest owns.
    """
    vendor_dir = Path(vendor_dir)
    names = _known_ops(manifest, ops)
    expected = manifest.files(names)
    modified: list[str] = []
    missing: list[str] = []
    mode_changed: list[str] = []
    fmt = manifest.upstream.object_format
    for rel, entry in expected.items():
        found = read_vendored(disk_path(vendor_dir, rel))
        if found is None:
            missing.append(rel)
            continue
        data, mode = found
        if mode != entry.mode:
            mode_changed.append(rel)
        if len(data) != entry.size or git_blob_id(data, fmt) != entry.blob:
            modified.append(rel)
    roots = [""] if ops is None else _package_roots(manifest, names)
    owned = manifest.files()
    on_disk = list_vendor_files(vendor_dir, roots) if vendor_dir.is_dir() else []
    extra = [rel for rel in on_disk if rel not in owned]
    return VerifyReport(
        modified=tuple(sorted(modified)),
        missing=tuple(sorted(missing)),
        extra=tuple(sorted(extra)),
        mode_changed=tuple(sorted(mode_changed)),
        checked=len(expected),
    )


def narrow_report(manifest: Manifest, whole: VerifyReport, ops: Iterable[str]) -> VerifyReport:
    """What ``verify_files(vendor_dir, manifest, ops)`` reports, taken from ``whole`` (its report
    over every op) instead of hashing the files again: the problems of ``ops``' files, and the
    unowned files below their packages' vendored paths."""
    names = _known_ops(manifest, ops)
    expected = manifest.files(names)
    roots = _package_roots(manifest, names)

    def below_roots(rel: str) -> bool:
        return any(rel == root or rel.startswith(f"{root}/") for root in roots)

    return VerifyReport(
        modified=tuple(rel for rel in whole.modified if rel in expected),
        missing=tuple(rel for rel in whole.missing if rel in expected),
        extra=tuple(rel for rel in whole.extra if below_roots(rel)),
        mode_changed=tuple(rel for rel in whole.mode_changed if rel in expected),
        checked=len(expected),
    )
