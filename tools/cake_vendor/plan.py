"""Compare what should be vendored with what is on disk and in the previous manifest."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from miles_ext_kernels.cake.manifest import (
    FileEntry,
    Manifest,
    disk_path,
    git_blob_id,
    list_vendor_files,
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
        state = _disk_state(vendor_dir, rel, object_format)
        if state is not None and state[1] == "040000":
            inside = list_vendor_files(vendor_dir, [rel])
            if all(p in leaving for p in inside):
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
        state = _disk_state(vendor_dir, rel, object_format)
        if state is None:
            continue
        if not _matches(state, old_op_files[rel]):
            plan.local_edits.append(rel)
        plan.changes.append(Change(rel, DELETE))

    for name in sorted(tool_files):
        path = vendor_dir / name
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        if current != tool_files[name]:
            kind = ADD if current is None else UPDATE
            plan.changes.append(Change(name, kind, "100644", tool_files[name]))

    manifest_path = vendor_dir / "VENDORED.json"
    current_manifest = manifest_path.read_bytes() if manifest_path.is_file() else None
    plan.manifest_changed = current_manifest != new_manifest_bytes
    return plan
