"""Audit against upstream: re-derive every blob id from upstream objects at the recorded commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    disk_path,
    git_blob_id,
    read_vendored,
    verify_files,
)

from .collect import collect_packages, lookup
from .gitsource import UpstreamRepo
from .verify import require_manifest

ISSUE_KINDS = (
    "commit",
    "manifest_mismatch",
    "modified",
    "mode_changed",
    "missing_downstream",
    "not_upstream",
    "extra",
)


@dataclass
class AuditReport:
    """Issues by kind, each a list of ``"<op>: <path>: <detail>"`` strings."""

    issues: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in ISSUE_KINDS})
    checked: int = 0

    @property
    def clean(self) -> bool:
        """True when no issue of any kind was found."""
        return not any(self.issues.values())

    def add(self, kind: str, op: str, text: str) -> None:
        """Record one issue."""
        self.issues[kind].append(f"{op}: {text}")

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"clean": self.clean, "checked": self.checked,
                **{k: sorted(v) for k, v in self.issues.items()}}


def audit_vendor(vendor_dir: Path, checkout: Path) -> AuditReport:
    """Compare VENDORED.json and the vendored files with upstream's objects at each op's commit."""
    manifest = require_manifest(vendor_dir)
    report = AuditReport()
    fmt = manifest.upstream.object_format
    with UpstreamRepo(checkout) as repo:
        for name, op in manifest.ops.items():
            resolved = repo.resolve_recorded(op.commit, f"{MANIFEST_NAME} ops.{name}.commit")
            if resolved.tree_id != op.tree:
                report.add("commit", name, f"tree {op.tree} recorded, upstream {resolved.tree_id}")
            recorded = op.files()
            seen: set[str] = set()
            for package in op.packages:
                obj = lookup(resolved.commit.tree, package.upstream_path)
                if obj is None:
                    report.add("not_upstream", name, f"{package.upstream_path}: no such package")
                    continue
                if obj.hexsha != package.object_id:
                    report.add("commit", name, f"{package.upstream_path}: object "
                               f"{package.object_id} recorded, upstream {obj.hexsha}")
                (collected,) = collect_packages(
                    resolved.commit, [(package.upstream_path, package.role)]
                )
                for up in collected.files:
                    rel = up.vendored_path
                    seen.add(rel)
                    report.checked += 1
                    entry = recorded.get(rel)
                    if entry is None:
                        report.add("missing_downstream", name, f"{rel}: not in VENDORED.json")
                    elif (entry.blob, entry.mode) != (up.blob, up.mode):
                        report.add("manifest_mismatch", name, f"{rel}: manifest {entry.blob} "
                                   f"{entry.mode}, upstream {up.blob} {up.mode}")
                    found = read_vendored(disk_path(vendor_dir, rel))
                    if found is None:
                        report.add("missing_downstream", name, f"{rel}: not on disk")
                        continue
                    data, mode = found
                    if git_blob_id(data, fmt) != up.blob:
                        report.add("modified", name, f"{rel}: differs from upstream {up.blob}")
                    if mode != up.mode:
                        report.add("mode_changed", name,
                                   f"{rel}: {mode} on disk, upstream {up.mode}")
            for rel in sorted(set(recorded) - seen):
                report.add("not_upstream", name, f"{rel}: recorded but not in upstream")
    for rel in verify_files(vendor_dir, manifest).extra:
        report.add("extra", "-", f"{rel}: owned by no op")
    return report
