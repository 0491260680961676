"""Path safety: hostile upstream paths, case-fold collisions, upstream -> vendored mapping."""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable

from miles_ext_kernels.cake.manifest import TOOL_DIRS, TOOL_FILES

from .errors import VendorError

UPSTREAM_PREFIX = "flashinfer/"
_RESERVED_TOP = {n.casefold() for n in TOOL_FILES | TOOL_DIRS}


def component_problem(name: str) -> str | None:
    """Why one path component is unsafe, or None when it is fine."""
    if name in ("", ".", ".."):
        return f"component {name!r} is not allowed"
    if "\0" in name:
        return "contains a NUL byte"
    if "\\" in name:
        return "contains a backslash"
    if "/" in name:
        return "contains a slash inside one name"
    if name.casefold() == ".git":
        return "contains a .git component"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "contains a control character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    return None


def path_problem(path: str) -> str | None:
    """Why a repository-relative POSIX path is unsafe, or None when it is fine."""
    if not path:
        return "is empty"
    if "\0" in path:
        return "contains a NUL byte"
    if "\\" in path:
        return "contains a backslash"
    if path.startswith("/"):
        return "is absolute"
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        return "is absolute (drive letter)"
    for part in path.split("/"):
        problem = component_problem(part)
        if problem:
            return problem
    return None


def normalize_package_arg(raw: str) -> str:
    """Validate a ``--package`` value and return it without trailing slashes."""
    if raw.startswith("/"):
        raise VendorError(f"--package {raw!r}: is absolute; give a path inside the upstream repo")
    cleaned = raw.rstrip("/") if len(raw) > 1 else raw
    problem = path_problem(cleaned)
    if problem:
        raise VendorError(f"--package {raw!r}: {problem}")
    return cleaned


def vendored_path_for(upstream_path: str) -> str:
    """Where an upstream path lands in the vendor dir (a leading ``flashinfer/`` is dropped)."""
    if upstream_path == UPSTREAM_PREFIX.rstrip("/"):
        raise VendorError(
            f"--package {upstream_path!r}: the whole upstream package cannot be vendored; "
            "name a subdirectory or file"
        )
    mapped = upstream_path
    if upstream_path.startswith(UPSTREAM_PREFIX):
        mapped = upstream_path[len(UPSTREAM_PREFIX) :]
    top = mapped.split("/", 1)[0]
    if top.casefold() in _RESERVED_TOP:
        raise VendorError(
            f"--package {upstream_path!r}: would land on {top!r}, a name the tool reserves in the "
            "vendor directory"
        )
    return mapped


def fold_key(path: str) -> str:
    """Key under which two paths collide on case-insensitive / normalising filesystems."""
    return unicodedata.normalize("NFC", path).casefold()


def case_collisions(paths: Iterable[str]) -> list[tuple[str, ...]]:
    """Groups of distinct paths (or their parent directories) that fold to the same key."""
    groups: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            groups.setdefault(fold_key(prefix), set()).add(prefix)
    return sorted(tuple(sorted(g)) for g in groups.values() if len(g) > 1)


def paths_overlap(a: str, b: str) -> bool:
    """True when one vendored path equals or contains the other."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def symlink_problem(link_path: str, target: bytes, package_root: str, is_tree: bool) -> str | None:
    """Why a symlink at ``link_path`` (repo path) pointing to ``target`` is refused, or None.

    Only relative targets that stay inside the package directory are kept.
    """
    try:
        text = target.decode("utf-8")
    except UnicodeDecodeError:
        return "has a target that is not UTF-8"
    if not text or "\0" in text or "\\" in text:
        return f"has an unsafe target {text!r}"
    if text.startswith("/"):
        return f"points to the absolute path {text!r}"
    if not is_tree:
        return f"is a single-file package, so its target {text!r} lies outside it"
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), text))
    if resolved == package_root or not resolved.startswith(package_root + "/"):
        return f"points outside its package {package_root!r} (target {text!r} -> {resolved!r})"
    if any(part.casefold() == ".git" for part in resolved.split("/")):
        return f"points into a .git directory ({text!r})"
    return None
