"""Compare what should be vendored with what is on disk and in the previous manifest."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from miles_ext_kernels.cake.manifest import (
    FileEntry,
    Manifest,
    disk_path,
    git_blob_id,
    read_vendored,
)

ADD = "add"
UPDATE = "update"
DELETE = "delete"
MODE = "mode"


@dataclass(frozen=True)
class Change:
    """One file to add, update (content), delete, or change mode; ``data`` is the new content."""

    path: str
    kind: str
    mode: str | None = None
    data: bytes | None = None


@dataclass
class Plan:
    """Everything one run would do, and everything that stops it."""

    op: str
    changes: list[Change] = field(default_factory=list)
    local_edits: list[str] = field(default_factory=list)
    unowned_in_the_way: list[str] = field(default_factory=list)
    owned_by_other_ops: list[str] = field(default_factory=list)
    manifest_bytes: bytes = b""
    manifest_changed: bool = False

    @property
    def changes_anything(self) -> bool:
        """True when files or the manifest would change."""
        return bool(self.changes) or self.manifest_changed

    def by_kind(self, kind: str) -> list[str]:
        """Paths of the changes of one kind, sorted."""
        return sorted(c.path for c in self.changes if c.kind == kind)

    def summary(self) -> dict:
        """JSON-ready description."""
        return {
            "op": self.op,
            "add": self.by_kind(ADD),
            "update": self.by_kind(UPDATE),
            "delete": self.by_kind(DELETE),
            "mode": self.by_kind(MODE),
            "manifest_changed": self.manifest_changed,
            "local_edits": sorted(self.local_edits),
            "unowned_in_the_way": sorted(self.unowned_in_the_way),
            "owned_by_other_ops": sorted(self.owned_by_other_ops),
        }


def _disk_state(vendor_dir: Path, rel: str, object_format: str) -> tuple[str, str] | None:
    found = read_vendored(disk_path(vendor_dir, rel))
    if found is None:
        return None
    data, mode = found
    return git_blob_id(data, object_format), mode


def _matches(state: tuple[str, str] | None, entry: FileEntry) -> bool:
    return state is not None and state == (entry.blob, entry.mode)


def _lstat_kind(path: Path) -> str | None:
    """``dir`` (a real directory), ``other`` (file, symlink, ...) or None when absent."""
    try:
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return "dir" if stat.S_ISDIR(st.st_mode) else "other"


def entries_below(vendor_dir: Path, rel: str) -> list[str]:
    """Every non-directory entry below the directory ``rel``, caches and symlinks included.

    Symlinks to directories are entries (never followed); empty directories are not.
    """
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(disk_path(vendor_dir, rel)):
        base = Path(dirpath)
        linked = [d for d in dirnames if (base / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if d not in linked]
        for name in [*filenames, *linked]:
            found.append((base / name).relative_to(vendor_dir).as_posix())
    return sorted(found)


def _non_directory_ancestor(vendor_dir: Path, rel: str) -> str | None:
    """The first ancestor of ``rel`` on disk that is not a real directory (file, symlink)."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        kind = _lstat_kind(disk_path(vendor_dir, prefix))
        if kind is None:
            return None
        if kind == "other":
            return prefix
    return None


def _occupants(vendor_dir: Path, rel: str) -> list[str]:
    """What stands on disk where the file ``rel`` must go and would be moved away for it.

    A non-directory ancestor, or everything inside a directory at ``rel``; [] otherwise.
    """
    ancestor = _non_directory_ancestor(vendor_dir, rel)
    if ancestor is not None:
        return [ancestor]
    if _lstat_kind(disk_path(vendor_dir, rel)) == "dir":
        return entries_below(vendor_dir, rel)
    return []


def _record_blockers(
    plan: Plan, occupants: list[str], leaving: set[str], other_files: dict[str, FileEntry]
) -> bool:
    """File occupants this run does not delete as blockers; True when there was any."""
    blocked = False
    for path in occupants:
        if path in leaving:
            continue
        target = plan.owned_by_other_ops if path in other_files else plan.unowned_in_the_way
        if path not in target:
            target.append(path)
        blocked = True
    return blocked


def make_plan(
    vendor_dir: Path,
    op: str,
    old: Manifest | None,
    desired: dict[str, tuple[FileEntry, bytes]],
    tool_files: dict[str, bytes],
    new_manifest_bytes: bytes,
    object_format: str = "sha1",
) -> Plan:
    """Plan the run: ``desired`` maps vendor-relative paths to (record, content).

    ``tool_files`` (``.gitattributes`` ...) are written when their bytes differ.
    """
    plan = Plan(op=op, manifest_bytes=new_manifest_bytes)
    old_op_files = old.ops[op].files() if old is not None and op in old.ops else {}
    other_files: dict[str, FileEntry] = {}
    if old is not None:
        for name, entry in old.ops.items():
            if name != op:
                other_files.update(entry.files())

    leaving = set(old_op_files) - set(desired) - set(other_files)
    for rel in sorted(desired):
        entry, data = desired[rel]
        if _record_blockers(plan, _occupants(vendor_dir, rel), leaving, other_files):
            continue  # never move away what the manifest does not own
        state = _disk_state(vendor_dir, rel, object_format)
        if state is not None and state[1] == "040000":
            state = None  # a directory this run empties and removes
        other = other_files.get(rel)
        if other is not None and (other.blob, other.mode) != (entry.blob, entry.mode):
            plan.owned_by_other_ops.append(rel)
            continue
        if _matches(state, entry):
            continue
        previous = old_op_files.get(rel) or other
        if state is not None:
            if previous is None:
                plan.unowned_in_the_way.append(rel)
                continue
            if not _matches(state, previous):
                plan.local_edits.append(rel)
        if state is None:
            kind = ADD
        elif state[0] == entry.blob:
            kind = MODE
        else:
            kind = UPDATE
        plan.changes.append(Change(rel, kind, entry.mode, data))

    for rel in sorted(set(old_op_files) - set(desired)):
        if rel in other_files:
            continue  # still owned by another op: only this op's ownership goes
        if _non_directory_ancestor(vendor_dir, rel) is not None:
            continue  # the path now runs through something nobody owns: nothing of ours there
        state = _disk_state(vendor_dir, rel, object_format)
        if state is None or state[1] == "040000":
            continue  # gone, or a directory now: its contents are not ours to delete
        if not _matches(state, old_op_files[rel]):
            plan.local_edits.append(rel)
        plan.changes.append(Change(rel, DELETE))

    for name in sorted(tool_files):
        path = vendor_dir / name
        if _lstat_kind(path) is not None and (path.is_symlink() or not path.is_file()):
            _record_blockers(plan, [name], set(), {})
            continue
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        if current != tool_files[name]:
            kind = ADD if current is None else UPDATE
            plan.changes.append(Change(name, kind, "100644", tool_files[name]))

    manifest_path = vendor_dir / "VENDORED.json"
    current_manifest = manifest_path.read_bytes() if manifest_path.is_file() else None
    plan.manifest_changed = current_manifest != new_manifest_bytes
    return plan
