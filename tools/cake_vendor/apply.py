"""Apply a plan atomically: stage in the vendor dir, swap with backups, write the manifest last.

Protocol (everything under ``<vendor>/.vendor-txn/``, so on the same filesystem):

1. stage every new file as ``new/<n>`` (symlinks as symlinks, exec bits set);
2. write ``journal.json``: each path with its staged and backup names, the directories the
   swap will create, and the sha256 of the manifest before and after;
3. move every file to be replaced or deleted to ``old/<n>``, remove directories that became
   empty, move every staged file into place;
4. run the post-swap check (downstream ``.gitattributes`` / ignore rules);
5. write ``VENDORED.json`` through a temp file + ``os.replace`` (the commit point), then drop
   the transaction directory.

A failure before step 5 rolls everything back from the journal; so does the next run when the
process died (power loss aside: files are not fsynced one by one, the manifest is).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    MODE_EXECUTABLE,
    MODE_SYMLINK,
    TXN_DIR_NAME,
    disk_path,
)

from .errors import VendorError
from .plan import DELETE, Plan

FaultHook = Callable[[str], None]
JOURNAL = "journal.json"


def _noop(step: str) -> None:
    return None


def _sha256_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _check_parents(vendor_dir: Path, rel: str, moving: set[str]) -> None:
    """Refuse to write through a symlinked or non-directory ancestor inside the vendor dir.

    Ancestors in ``moving`` (paths this plan replaces or deletes) are moved away first.
    """
    current = vendor_dir
    parts = rel.split("/")
    for depth, part in enumerate(parts[:-1], start=1):
        current = current / part
        if "/".join(parts[:depth]) in moving:
            return
        if current.is_symlink():
            raise VendorError(f"{rel}: its parent {current} is a symlink; not writing through it")
        if current.exists() and not current.is_dir():
            raise VendorError(f"{rel}: its parent {current} is a file nobody owns; remove it first")


def _stage(path: Path, mode: str | None, data: bytes) -> None:
    if mode == MODE_SYMLINK:
        os.symlink(os.fsdecode(data), path)
        return
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o755 if mode == MODE_EXECUTABLE else 0o644)


def _remove_empty_parents(vendor_dir: Path, rel: str) -> None:
    parent = disk_path(vendor_dir, rel).parent
    while parent != vendor_dir and vendor_dir in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def apply_plan(
    vendor_dir: Path,
    plan: Plan,
    fault: FaultHook | None = None,
    post_swap_check: Callable[[], None] | None = None,
) -> None:
    """Carry out ``plan`` in ``vendor_dir`` (which exists and is locked by the caller)."""
    fault = fault or _noop
    txn = vendor_dir / TXN_DIR_NAME
    if txn.exists():
        raise VendorError(f"{txn}: an earlier transaction is pending; recover it first")
    moving = {c.path for c in plan.changes}
    for change in plan.changes:
        _check_parents(vendor_dir, change.path, moving)
    manifest_path = vendor_dir / MANIFEST_NAME
    (txn / "new").mkdir(parents=True)
    (txn / "old").mkdir()
    try:
        entries = []
        creates: set[str] = set()
        for index, change in enumerate(plan.changes):
            staged = None
            if change.kind != DELETE:
                assert change.data is not None
                staged = str(index)
                _stage(txn / "new" / staged, change.mode, change.data)
                parts = change.path.split("/")
                for depth in range(1, len(parts)):
                    prefix = "/".join(parts[:depth])
                    existing = disk_path(vendor_dir, prefix)
                    if existing.is_symlink() or not existing.is_dir():
                        creates.add(prefix)
            entries.append({"path": change.path, "staged": staged, "backup": str(index)})
        fault("staged")
        journal = {
            "entries": entries,
            "creates": sorted(creates),
            "manifest_before": _sha256_of(manifest_path),
            "manifest_after": hashlib.sha256(plan.manifest_bytes).hexdigest(),
        }
        (txn / JOURNAL).write_text(json.dumps(journal, sort_keys=True), encoding="utf-8")
        fault("journal")
        for entry in entries:
            dest = disk_path(vendor_dir, entry["path"])
            if os.path.lexists(dest):
                os.rename(dest, txn / "old" / entry["backup"])
                fault(f"backup:{entry['path']}")
        for entry in entries:
            if entry["staged"] is None:
                _remove_empty_parents(vendor_dir, entry["path"])
        fault("removed-empty-dirs")
        for entry in entries:
            if entry["staged"] is None:
                continue
            dest = disk_path(vendor_dir, entry["path"])
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(txn / "new" / entry["staged"], dest)
            fault(f"place:{entry['path']}")
        if post_swap_check is not None:
            post_swap_check()
        fault("checked")
        temp = txn / MANIFEST_NAME
        with open(temp, "wb") as handle:
            handle.write(plan.manifest_bytes)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        fault("manifest-temp")
        if plan.manifest_changed:
            os.replace(temp, manifest_path)
    except BaseException:
        rollback(vendor_dir)
        raise
    _fsync_dir(vendor_dir)
    shutil.rmtree(txn, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def rollback(vendor_dir: Path) -> None:
    """Undo a pending transaction from its journal (no journal: nothing was swapped yet)."""
    txn = vendor_dir / TXN_DIR_NAME
    journal_path = txn / JOURNAL
    if journal_path.is_file():
        journal = json.loads(journal_path.read_text(encoding="utf-8"))
        entries = list(reversed(journal["entries"]))
        for entry in entries:  # 1. take placed files back out
            staged = entry["staged"]
            dest = disk_path(vendor_dir, entry["path"])
            if staged is not None and not os.path.lexists(txn / "new" / staged):
                if os.path.lexists(dest):
                    os.rename(dest, txn / "new" / staged)
        for rel in sorted(journal["creates"], key=lambda p: -p.count("/")):
            try:  # 2. drop the directories the swap created
                disk_path(vendor_dir, rel).rmdir()
            except OSError:
                pass
        for entry in entries:  # 3. put the previous files back
            backup = txn / "old" / entry["backup"]
            if os.path.lexists(backup):
                dest = disk_path(vendor_dir, entry["path"])
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.rename(backup, dest)
    shutil.rmtree(txn, ignore_errors=True)


def recover(vendor_dir: Path) -> str | None:
    """Finish or undo a transaction an earlier process left behind; say which (None: none)."""
    txn = vendor_dir / TXN_DIR_NAME
    if not txn.exists():
        return None
    journal_path = txn / JOURNAL
    if journal_path.is_file():
        journal = json.loads(journal_path.read_text(encoding="utf-8"))
        current = _sha256_of(vendor_dir / MANIFEST_NAME)
        if current == journal["manifest_after"] and current != journal["manifest_before"]:
            shutil.rmtree(txn, ignore_errors=True)
            return "completed"
    rollback(vendor_dir)
    return "rolled back"
