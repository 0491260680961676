"""In-process API of the ``fi`` command: vendor one op from a pinned upstream commit."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import click
from filelock import FileLock, Timeout

from miles_ext_kernels.cake.manifest import (
    LOCK_NAME,
    MANIFEST_NAME,
    FileEntry,
    LicenseEntry,
    Manifest,
    OpEntry,
    PackageEntry,
    UpstreamInfo,
    dump_manifest,
)

from . import TOOL_VERSION
from .apply import FaultHook, apply_plan, recover
from .collect import CollectedPackage, collect_packages, lookup
from .config import load_config, require_checkout_root
from .downstream import GITATTRIBUTES, GITIGNORE, check_downstream
from .errors import VendorError
from .gitsource import UpstreamRepo
from .licenses import NOASSERTION, detect_spdx
from .paths import (
    case_collisions,
    fold_key,
    normalize_package_arg,
    paths_overlap,
    vendored_path_for,
)
from .plan import Plan, make_plan
from .profiles import LICENSE_FILES, layout_name_for, layout_warnings, select_layout
from .verify import read_manifest

UPSTREAM_NAME = "flashinfer"
LOCK_TIMEOUT_S = 60.0
_OP_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass
class VendorResult:
    """What a ``fi`` run did (or, with ``dry_run``, would do)."""

    op: str
    commit: str
    layout: str
    vendor_dir: Path
    plan: Plan
    applied: bool
    recovered: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready description."""
        return {
            "op": self.op,
            "commit": self.commit,
            "layout": self.layout,
            "vendor_dir": str(self.vendor_dir),
            "applied": self.applied,
            "changes_anything": self.plan.changes_anything,
            "recovered": self.recovered,
            "notes": self.notes,
            **self.plan.summary(),
        }


def vendor_dir_for(root: Path) -> Path:
    """The vendor directory of the downstream repo at ``root`` (a miles-ext-kernels checkout:
    it holds ``miles_ext_kernels/cake``; else a VendorError)."""
    return load_config(require_checkout_root(root, "root")).vendor_dir


def _progress_factory(stream: TextIO | None) -> Callable[[int], object] | None:
    if stream is None or not getattr(stream, "isatty", lambda: False)():
        return None

    def make(total: int):
        bar = click.progressbar(length=total, label="reading upstream blobs", file=stream)
        bar.__enter__()
        return bar

    return make


def _choose_packages(
    repo: UpstreamRepo, commit, op: str, packages: tuple[str, ...]
) -> tuple[str, list[tuple[str, str]]]:
    if packages:
        chosen = tuple(normalize_package_arg(p) for p in packages)
        layout = layout_name_for(op, chosen)
    else:
        chosen = select_layout(op, lambda p: lookup(commit.tree, p) is not None).packages
        layout = layout_name_for(op, chosen)
    seen: list[str] = []
    for path in chosen:
        if path in seen:
            raise VendorError(f"--package {path!r}: given twice")
        seen.append(path)
        vendored_path_for(path)  # refuse reserved destinations before reading anything
    result = [(p, "source") for p in chosen]
    for name in LICENSE_FILES:
        if name not in chosen and lookup(commit.tree, name) is not None:
            result.append((name, "license"))
    return layout, result


def _check_layout(collected: list[CollectedPackage], other_files: dict[str, FileEntry]) -> None:
    for i, a in enumerate(collected):
        for b in collected[i + 1 :]:
            if paths_overlap(a.vendored_path, b.vendored_path):
                raise VendorError(
                    f"--package {a.upstream_path!r} and --package {b.upstream_path!r} overlap "
                    f"in the vendor directory ({a.vendored_path!r} / {b.vendored_path!r})"
                )
    paths = [f.vendored_path for p in collected for f in p.files]
    groups = case_collisions(paths)
    if groups:
        raise VendorError(
            "refused: paths that collide on case-insensitive filesystems",
            [" <-> ".join(g) for g in groups],
        )
    folded_other = {fold_key(p): p for p in other_files}
    clashes = [
        f"{p} <-> {folded_other[fold_key(p)]} (another op)"
        for p in paths
        if fold_key(p) in folded_other and folded_other[fold_key(p)] != p
    ]
    if clashes:
        raise VendorError("refused: paths that case-collide with another op's files", clashes)


def build_op_entry(
    ref: str, commit_id: str, tree_id: str, layout: str, collected: list[CollectedPackage],
    object_format: str,
) -> OpEntry:
    """The manifest record of an op from its collected packages."""
    packages = []
    license_files: list[str] = []
    spdx = NOASSERTION
    for package in collected:
        files = {f.vendored_path: f.entry(object_format) for f in package.files}
        packages.append(
            PackageEntry(
                upstream_path=package.upstream_path,
                vendored_path=package.vendored_path,
                object_id=package.object_id,
                type=package.type,
                role=package.role,
                files=dict(sorted(files.items())),
            )
        )
        if package.role == "license":
            license_files.append(package.vendored_path)
            if package.upstream_path == "LICENSE" and package.files:
                spdx = detect_spdx(package.files[0].data)
    return OpEntry(
        ref=ref,
        commit=commit_id,
        tree=tree_id,
        tool_version=TOOL_VERSION,
        layout=layout,
        license=LicenseEntry(spdx=spdx, files=tuple(license_files)),
        packages=tuple(packages),
    )


def vendor_op(
    root: Path,
    checkout: Path | None,
    commit: str,
    op: str,
    packages: tuple[str, ...] = (),
    *,
    dry_run: bool = False,
    force: bool = False,
    progress: TextIO | None = None,
    fault: FaultHook | None = None,
) -> VendorResult:
    """Vendor ``op`` from ``checkout`` at ``commit`` into ``root``'s vendor directory.

    ``root`` is a miles-ext-kernels checkout (it holds ``miles_ext_kernels/cake``), as the
    CLI's ``--root``; ``checkout`` None uses the configured default. Raises
    :class:`VendorError` on any refusal (nothing written). ``fault(step)`` is called at each
    apply step (tests inject failures).
    """
    if not _OP_NAME.match(op):
        raise VendorError(f"--op {op!r}: use lower-case letters, digits and underscores")
    config = load_config(require_checkout_root(root, "root"))
    vendor_dir = config.vendor_dir
    checkout = Path(checkout) if checkout is not None else config.checkout
    with UpstreamRepo(checkout) as repo:
        resolved = repo.resolve(commit)
        layout, wanted = _choose_packages(repo, resolved.commit, op, tuple(packages))
        collected = collect_packages(resolved.commit, wanted, _progress_factory(progress))
        upstream = UpstreamInfo(UPSTREAM_NAME, repo.url(), repo.object_format)
        op_entry = build_op_entry(
            commit, resolved.hexsha, resolved.tree_id, layout, collected, repo.object_format
        )
    desired = {
        f.vendored_path: (f.entry(upstream.object_format), f.data)
        for p in collected
        for f in p.files
    }

    if dry_run:
        old = read_manifest(vendor_dir)
        _check_layout(collected, _other_files(old, op))
        plan = _plan(vendor_dir, op, old, op_entry, upstream, desired)
        return VendorResult(op, resolved.hexsha, layout, vendor_dir, plan, applied=False,
                            notes=layout_warnings(op, layout))

    vendor_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(vendor_dir / LOCK_NAME), timeout=LOCK_TIMEOUT_S)
    try:
        with lock:
            recovered = recover(vendor_dir)
            old = read_manifest(vendor_dir)
            _check_layout(collected, _other_files(old, op))
            plan = _plan(vendor_dir, op, old, op_entry, upstream, desired)
            _refuse_blockers(plan, force)
            result = VendorResult(op, resolved.hexsha, layout, vendor_dir, plan, applied=False,
                                  recovered=recovered, notes=layout_warnings(op, layout))
            owned = sorted(desired)

            def downstream_check() -> None:
                problems = check_downstream(vendor_dir, owned)
                if problems:
                    raise VendorError(
                        "refused: the downstream repository would not keep the vendored bytes",
                        problems,
                    )

            if not plan.changes_anything:
                downstream_check()
                return result
            apply_plan(vendor_dir, plan, fault=fault, post_swap_check=downstream_check)
            result.applied = True
            return result
    except Timeout as exc:
        lock_path = vendor_dir / LOCK_NAME
        raise VendorError(f"{lock_path}: another vendoring run holds the lock") from exc


def _other_files(old: Manifest | None, op: str) -> dict[str, FileEntry]:
    if old is None:
        return {}
    return old.files([n for n in old.ops if n != op])


def _plan(
    vendor_dir: Path, op: str, old: Manifest | None, op_entry: OpEntry, upstream: UpstreamInfo,
    desired: dict[str, tuple[FileEntry, bytes]],
) -> Plan:
    if old is not None and old.upstream.object_format != upstream.object_format:
        raise VendorError(
            f"{vendor_dir / MANIFEST_NAME}: records {old.upstream.object_format} ids but the "
            f"checkout uses {upstream.object_format}"
        )
    ops = dict(old.ops) if old is not None else {}
    ops[op] = op_entry
    new = Manifest(upstream=upstream, ops=dict(sorted(ops.items())))
    tool_files = {".gitattributes": GITATTRIBUTES, ".gitignore": GITIGNORE}
    return make_plan(
        vendor_dir, op, old, desired, tool_files, dump_manifest(new), upstream.object_format
    )


def _refuse_blockers(plan: Plan, force: bool) -> None:
    if plan.owned_by_other_ops:
        raise VendorError(
            "refused: these paths belong to another op with different content",
            sorted(plan.owned_by_other_ops),
        )
    if plan.unowned_in_the_way:
        raise VendorError(
            "refused: files nobody owns sit where vendored files go (move them away; the tool "
            "never deletes files it does not own)",
            sorted(plan.unowned_in_the_way),
        )
    if plan.local_edits and not force:
        raise VendorError(
            "refused: vendored files were edited locally (re-run with --force to overwrite)",
            sorted(plan.local_edits),
        )
