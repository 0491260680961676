"""Apply a plan atomically: stage in the vendor dir, swap with backups, write the manifest last.

Protocol (everything under ``<vendor>/.vendor-txn/``, so on the same filesystem):

1. stage every new file as ``new/<n>`` (symlinks as symlinks, exec bits set);
2. write ``journal.json`` atomically (temp file, fsync, ``os.replace``): each path with its
   staged and backup names, the directories the swap will create, and the sha256 of the
   manifest before and after;
3. move every file to be replaced or deleted to ``old/<n>``, remove directories that became
   empty, move every staged file into place;
4. run the post-swap check (downstream ``.gitattributes`` / ignore rules);
5. write ``VENDORED.json`` through a temp file + ``os.replace`` (the commit point), then drop
   the transaction directory.

A failure before step 5 rolls everything back from the journal; so does the next run when the
process died (power loss aside: files are not fsynced one by one, the manifest is). A journal
that cannot be interpreted stops the run with a :class:`VendorError` and nothing is touched.
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
from .paths import path_problem
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
        write_journal(txn, journal)
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


def write_journal(txn: Path, journal: dict) -> None:
    """Write ``journal.json`` atomically: a temp file, fsync, ``os.replace``, fsync the dir."""
    temp = txn / (JOURNAL + ".tmp")
    with open(temp, "wb") as handle:
        handle.write(json.dumps(journal, sort_keys=True).encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, txn / JOURNAL)
    _fsync_dir(txn)


def _entry_problem(entry: object) -> str | None:
    """Why one journal entry cannot be trusted, or None."""
    if not isinstance(entry, dict):
        return "an entry is not an object"
    path, staged, backup = entry.get("path"), entry.get("staged"), entry.get("backup")
    if not isinstance(path, str) or path_problem(path):
        return f"entry path {path!r} is not a safe relative path"
    if staged is not None and not (isinstance(staged, str) and staged.isdigit()):
        return f"entry {path!r}: staged name {staged!r} is not a number"
    if not (isinstance(backup, str) and backup.isdigit()):
        return f"entry {path!r}: backup name {backup!r} is not a number"
    return None


def _journal_problem(journal: object) -> str | None:
    """Why a parsed journal cannot be trusted to roll back from, or None."""
    if not isinstance(journal, dict):
        return "not a JSON object"
    missing = [k for k in ("entries", "creates", "manifest_before", "manifest_after")
               if k not in journal]
    if missing:
        return f"missing key {missing[0]!r}"
    if not isinstance(journal["entries"], list):
        return "'entries' is not a list"
    for entry in journal["entries"]:
        problem = _entry_problem(entry)
        if problem:
            return problem
    creates = journal["creates"]
    if not isinstance(creates, list) or any(
        not isinstance(c, str) or path_problem(c) for c in creates
    ):
        return "'creates' is not a list of safe relative paths"
    if not isinstance(journal["manifest_after"], str):
        return "'manifest_after' is not a string"
    if not isinstance(journal["manifest_before"], (str, type(None))):
        return "'manifest_before' is not a string or null"
    return None


def _stuck(txn: Path, why: str) -> VendorError:
    """The error for a pending transaction the tool cannot interpret (it touches nothing)."""
    return VendorError(
        f"{txn}: an interrupted run left a transaction that cannot be rolled back ({why}). "
        "Nothing was changed; the vendor directory may be half updated. The files the run "
        f"replaced or deleted are in {txn / 'old'}, the new ones in {txn / 'new'}. Run `verify` "
        f"to see which vendored files differ from {MANIFEST_NAME}, put the right ones back by "
        f"hand from {txn / 'old'}, then remove {txn} and run `fi` again"
    )


def read_journal(txn: Path) -> dict | None:
    """The journal of the pending transaction ``txn``; None when nothing was swapped yet.

    Raises :class:`VendorError` (and deletes nothing) when the journal is unreadable,
    malformed, or absent while backups exist.
    """
    journal_path = txn / JOURNAL
    if not os.path.lexists(journal_path):
        old = txn / "old"
        if old.is_dir() and any(old.iterdir()):
            raise _stuck(txn, f"backups in {old} but no {JOURNAL}")
        return None
    try:
        journal = json.loads(journal_path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _stuck(txn, f"{JOURNAL} is unreadable: {exc}") from exc
    problem = _journal_problem(journal)
    if problem:
        raise _stuck(txn, f"{JOURNAL}: {problem}")
    return journal


def rollback(vendor_dir: Path) -> None:
    """Undo a pending transaction from its journal (no journal: nothing was swapped yet)."""
    txn = vendor_dir / TXN_DIR_NAME
    journal = read_journal(txn)
    if journal is not None:
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
    journal = read_journal(txn)
    if journal is not None:
        current = _sha256_of(vendor_dir / MANIFEST_NAME)
        if current == journal["manifest_after"] and current != journal["manifest_before"]:
            shutil.rmtree(txn, ignore_errors=True)
            return "completed"
    rollback(vendor_dir)
    return "rolled back"
