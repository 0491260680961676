"""Offline verification and status of a vendor directory (no upstream needed)."""

from __future__ import annotations

from pathlib import Path

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    TXN_DIR_NAME,
    Manifest,
    ManifestError,
    VerifyReport,
    load_manifest,
    narrow_report,
    verify_files,
)

from .apply import read_journal
from .errors import VendorError
from .profiles import layout_warnings


def read_manifest(vendor_dir: Path) -> Manifest | None:
    """The manifest of ``vendor_dir`` (None when absent); a clear error when it is malformed.

    A :class:`ManifestError` already names the file, so its message is kept as it is.
    """
    try:
        return load_manifest(vendor_dir)
    except ManifestError as exc:
        raise VendorError(str(exc)) from exc
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise VendorError(f"{vendor_dir / MANIFEST_NAME}: cannot read ({why})") from exc


def require_manifest(vendor_dir: Path) -> Manifest:
    """The manifest of ``vendor_dir``; a clear error when it is absent or malformed."""
    manifest = read_manifest(vendor_dir)
    if manifest is None:
        raise VendorError(f"{vendor_dir / MANIFEST_NAME}: not found; nothing is vendored here")
    return manifest


def _verify(vendor_dir: Path, manifest: Manifest, ops: list[str] | None) -> VerifyReport:
    """:func:`verify_files` with I/O errors turned into a VendorError naming the directory."""
    try:
        return verify_files(vendor_dir, manifest, ops)
    except OSError as exc:
        raise VendorError(f"{vendor_dir}: cannot read vendored files ({exc})") from exc


def verify_vendor(vendor_dir: Path) -> VerifyReport:
    """Re-hash every vendored file of ``vendor_dir`` against its VENDORED.json."""
    return _verify(vendor_dir, require_manifest(vendor_dir), None)


def transaction_problem(vendor_dir: Path) -> str | None:
    """Why ``fi`` cannot roll back the pending transaction of ``vendor_dir``; None when it can
    (or when there is none)."""
    txn = vendor_dir / TXN_DIR_NAME
    if not txn.exists():
        return None
    try:
        read_journal(txn)
    except VendorError as exc:
        return str(exc)
    return None


def vendor_status(vendor_dir: Path) -> dict:
    """Per op: upstream, ref, commit, layout, license, packages with file counts, clean or not.

    ``clean`` and ``drift`` at the top are :func:`verify_vendor`'s verdict on the whole vendor
    directory (files that no op owns included), so ``status`` and ``verify`` agree. Each file
    is hashed once: the per-op verdicts are narrowed from the whole directory's.
    """
    manifest = require_manifest(vendor_dir)
    whole = _verify(vendor_dir, manifest, None)
    ops = {}
    for name, op in manifest.ops.items():
        report = narrow_report(manifest, whole, [name])
        ops[name] = {
            "ref": op.ref,
            "commit": op.commit,
            "layout": op.layout,
            "license": op.license.spdx if op.license else None,
            "packages": {p.vendored_path: len(p.files) for p in op.packages},
            "files": sum(len(p.files) for p in op.packages),
            "clean": report.clean,
            "drift": report.to_dict(),
            "warnings": layout_warnings(name, op.layout),
        }
    return {
        "vendor_dir": str(vendor_dir),
        "upstream": {
            "name": manifest.upstream.name,
            "url": manifest.upstream.url,
            "object_format": manifest.upstream.object_format,
        },
        "clean": whole.clean,
        "drift": whole.to_dict(),
        "pending_transaction": (vendor_dir / TXN_DIR_NAME).exists(),
        "transaction_problem": transaction_problem(vendor_dir),
        "ops": ops,
    }
