"""Read packages from the tree objects of a commit: blobs, modes, symlinks; refuse the unsafe."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import git

from miles_ext_kernels.cake.manifest import (
    MODE_EXECUTABLE,
    MODE_FILE,
    MODE_SYMLINK,
    FileEntry,
    git_blob_id,
)

from .errors import VendorError
from .paths import component_problem, symlink_problem, vendored_path_for

#: What GitPython raises when an object the commit names is not in the object database.
GIT_READ_ERRORS = (ValueError, git.GitCommandError, git.BadObject, git.BadName)
LFS_SIGNATURE = b"version https://git-lfs.github.com/spec/"
LFS_POINTER_MAX_BYTES = 1024
GITLINK_MODE = 0o160000


@dataclass(frozen=True)
class CollectedFile:
    """One upstream file read raw from the object database."""

    upstream_path: str
    vendored_path: str
    mode: str
    data: bytes
    blob: str

    def entry(self, object_format: str = "sha1") -> FileEntry:
        """Manifest record of this file."""
        return FileEntry.from_bytes(self.data, self.mode, object_format)


@dataclass
class CollectedPackage:
    """A package (directory or single file) read at the commit."""

    upstream_path: str
    vendored_path: str
    object_id: str
    type: str
    role: str
    files: list[CollectedFile] = field(default_factory=list)


@dataclass(frozen=True)
class _PendingBlob:
    upstream_path: str
    mode: int
    blob: git.Blob


def unreadable_object(repo: git.Repo, oid: str, path: str, exc: Exception) -> VendorError:
    """The error for an object of the upstream checkout that cannot be read."""
    checkout = repo.working_tree_dir or repo.git_dir
    return VendorError(
        f"--checkout {str(checkout)!r}: object {oid} ({path}) cannot be read: the checkout is "
        f"corrupt or shallow; run `git -C {checkout} fsck` and fetch the missing objects "
        f"({exc})"
    )


def read_object(obj: git.Blob | git.Tree, path: str) -> bytes:
    """Raw bytes of a blob or tree; a clear error when the object database lacks it."""
    try:
        return obj.data_stream.read()
    except GIT_READ_ERRORS as exc:
        raise unreadable_object(obj.repo, obj.hexsha, path or "the root tree", exc) from exc


def lookup(tree: git.Tree, path: str) -> git.objects.base.Object | None:
    """The object at ``path`` in ``tree`` (tree, blob or submodule), or None."""
    try:
        return tree / path
    except KeyError:
        return None
    except GIT_READ_ERRORS as exc:
        where = f"a tree on the way to {path}"
        raise unreadable_object(tree.repo, tree.hexsha, where, exc) from exc


def nearest_paths(tree: git.Tree, path: str, limit: int = 6) -> list[str]:
    """Existing paths close to a missing ``path``: siblings in its deepest existing directory."""
    parts = path.split("/")
    current = tree
    prefix: list[str] = []
    for part in parts[:-1]:
        child = lookup(current, part)
        if not isinstance(child, git.Tree):
            break
        current = child
        prefix.append(part)
    try:
        names = [item.name for item in current]
    except GIT_READ_ERRORS:
        return []  # the caller's error stands; this is only a hint
    wanted = parts[len(prefix)] if len(prefix) < len(parts) else parts[-1]
    close = difflib.get_close_matches(wanted, names, n=limit, cutoff=0.3)
    chosen = close or sorted(names)[:limit]
    return ["/".join([*prefix, n]) for n in chosen]


def _mode_name(mode: int) -> str | None:
    if mode == 0o120000:
        return MODE_SYMLINK
    if mode & 0o170000 == 0o100000:
        return MODE_EXECUTABLE if mode & 0o111 else MODE_FILE
    return None


def tree_entries(data: bytes, id_len: int = 20) -> list[tuple[bytes, int, str]]:
    """Parse a raw tree object: ``(binary id, mode, name)`` per entry, names not validated.

    Names are decoded as UTF-8 with ``surrogateescape`` (invalid bytes are then refused by
    :func:`component_problem`). GitPython's own parser rejects some hostile names with a bare
    ValueError; parsing here lets the tool name every offending path.
    """
    entries = []
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = int(data[pos:space], 8)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries.append((data[nul + 1 : nul + 1 + id_len], mode, name))
        pos = nul + 1 + id_len
    return entries


def _walk(tree: git.Tree, problems: list[str]) -> Iterator[_PendingBlob]:
    """Yield every blob below ``tree`` from its raw entries (names checked before any use)."""
    entries = tree_entries(read_object(tree, tree.path))
    for binsha, mode, name in entries:
        path = f"{tree.path}/{name}" if tree.path else name
        problem = component_problem(name)
        if problem:
            problems.append(f"{path!r}: hostile path ({problem})")
            continue
        if mode == GITLINK_MODE:
            problems.append(f"{path}: is a submodule gitlink (mode 160000); vendor its "
                            "repository separately")
        elif mode >> 12 == 0o04:
            yield from _walk(git.Tree(tree.repo, binsha, mode, path), problems)
        else:
            yield _PendingBlob(path, mode, git.Blob(tree.repo, binsha, mode, path))


def collect_packages(
    commit: git.Commit,
    packages: list[tuple[str, str]],
    progress: Callable[[int], object] | None = None,
) -> list[CollectedPackage]:
    """Read every ``(upstream_path, role)`` package at ``commit``; one error lists all refusals.

    ``progress(total)`` may return a context manager with ``update(n)`` (a click progress bar).
    """
    root = commit.tree
    problems: list[str] = []
    pending: list[tuple[CollectedPackage, list[_PendingBlob]]] = []
    for upstream_path, role in packages:
        obj = lookup(root, upstream_path)
        if obj is None:
            raise VendorError(
                f"--package {upstream_path!r}: no such path at commit {commit.hexsha}; nearest "
                "existing paths:",
                nearest_paths(root, upstream_path),
            )
        package = CollectedPackage(
            upstream_path=upstream_path,
            vendored_path=vendored_path_for(upstream_path),
            object_id=obj.hexsha,
            type="tree" if isinstance(obj, git.Tree) else "blob",
            role=role,
        )
        if obj.mode == GITLINK_MODE or obj.type == "submodule":
            problems.append(f"{upstream_path}: is a submodule gitlink (mode 160000)")
            continue
        if isinstance(obj, git.Tree):
            blobs = list(_walk(obj, problems))
        else:
            blobs = [_PendingBlob(upstream_path, obj.mode, obj)]
        pending.append((package, blobs))
    if problems:
        raise VendorError("refused: the packages hold entries that cannot be vendored", problems)

    total = sum(len(b) for _, b in pending)
    bar = progress(total) if progress is not None else None
    try:
        for package, blobs in pending:
            for item in blobs:
                package.files.append(_read_blob(package, item, problems))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if problems:
        raise VendorError("refused: the packages hold entries that cannot be vendored", problems)
    return [p for p, _ in pending]


def _read_blob(package: CollectedPackage, item: _PendingBlob, problems: list[str]) -> CollectedFile:
    data = read_object(item.blob, item.upstream_path)
    if git_blob_id(data) != item.blob.hexsha:
        raise VendorError(
            f"{item.upstream_path}: object database returned bytes that do not hash to "
            f"{item.blob.hexsha}"
        )
    mode = _mode_name(item.mode)
    rel = item.upstream_path
    if mode is None:
        problems.append(f"{rel}: unsupported git mode {item.mode:o}")
        mode = MODE_FILE
    elif mode == MODE_SYMLINK:
        problem = symlink_problem(rel, data, package.upstream_path, package.type == "tree")
        if problem:
            problems.append(f"{rel}: symlink {problem}")
    elif data.startswith(LFS_SIGNATURE) and len(data) <= LFS_POINTER_MAX_BYTES:
        problems.append(f"{rel}: is a Git LFS pointer, not the file's content; fetch the real "
                        "bytes into the upstream repository (git lfs) and vendor from there")
    suffix = rel[len(package.upstream_path) :]
    return CollectedFile(
        upstream_path=rel,
        vendored_path=package.vendored_path + suffix,
        mode=mode,
        data=data,
        blob=item.blob.hexsha,
    )
