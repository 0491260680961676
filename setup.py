"""Build hook: list the vendored upstream license files in the distribution's metadata.

Everything else about the build lives in ``pyproject.toml``. This file exists for one thing
``pyproject.toml`` cannot express: PEP 639 requires every ``project.license-files`` pattern to
match at least one file (setuptools warns today and will refuse), and the source repository
commits no vendored files, so a glob over ``miles_ext_kernels/cake/_vendor`` would match nothing
in a clean checkout. Here the list is computed instead:

* our own ``LICENSE`` and ``NOTICE`` (always; the build fails if either is missing);
* every license file VENDORED.json records for a vendored op (``ops.<op>.license.files``,
  paths relative to the vendor directory; the build fails if one is missing);
* every other ``LICENSE*`` / ``LICENCE*`` / ``NOTICE*`` / ``COPYING*`` file under the vendor
  directory (a vendored package may carry its own).

It also refuses to build when a vendored op's SPDX id is not part of ``project.license``, so
the wheel's ``License-Expression`` never understates what it carries. Standard library only;
the package itself is never imported.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
VENDOR_DIR = "miles_ext_kernels/cake/_vendor"
MANIFEST_NAME = "VENDORED.json"
OWN_LICENSE_FILES = ("LICENSE", "NOTICE")
LICENSE_NAME = re.compile(r"^(LICEN[CS]E|NOTICE|COPYING)([._-].*)?$")
_NOT_SPDX_IDS = {"AND", "OR", "WITH"}


class LicenseConfigError(RuntimeError):
    """The license files or the license expression of the distribution are inconsistent."""


def read_vendor_manifest(root: Path) -> dict | None:
    """The parsed VENDORED.json under ``root``, or None when nothing is vendored."""
    path = root / VENDOR_DIR / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LicenseConfigError(f"{path}: not valid UTF-8 JSON ({exc})") from exc


def recorded_licenses(manifest: dict | None) -> dict[str, dict]:
    """``{op: {"spdx": str, "files": [vendor-relative paths]}}`` for ops that record a license."""
    if manifest is None:
        return {}
    ops = manifest.get("ops")
    if not isinstance(ops, dict):
        raise LicenseConfigError(f"{VENDOR_DIR}/{MANIFEST_NAME}: 'ops' must be an object")
    found = {}
    for name, op in ops.items():
        entry = op.get("license") if isinstance(op, dict) else None
        if entry is None:
            continue
        if not isinstance(entry.get("spdx"), str) or not isinstance(entry.get("files"), list):
            raise LicenseConfigError(
                f"{VENDOR_DIR}/{MANIFEST_NAME}: ops.{name}.license needs 'spdx' and 'files'"
            )
        found[name] = entry
    return found


def vendored_license_files(root: Path, manifest: dict | None) -> list[str]:
    """Root-relative POSIX paths of the vendored license files (recorded ones first)."""
    paths: list[str] = []
    for op, entry in recorded_licenses(manifest).items():
        for rel in entry["files"]:
            path = f"{VENDOR_DIR}/{rel}"
            if not (root / path).is_file():
                raise LicenseConfigError(
                    f"VENDORED.json records license file {rel!r} for op {op!r}, "
                    f"but {path} does not exist"
                )
            paths.append(path)
    vendor = root / VENDOR_DIR
    if vendor.is_dir():
        for file in sorted(vendor.rglob("*")):
            if file.is_file() and LICENSE_NAME.match(file.name):
                paths.append(file.relative_to(root).as_posix())
    return list(dict.fromkeys(paths))


def declared_license_expression(root: Path) -> str | None:
    """``project.license`` of pyproject.toml when it is an SPDX expression string, else None."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: setuptools' own TOML reader
        try:
            from setuptools.compat.py310 import tomllib
        except ImportError:
            return None
    with open(root / "pyproject.toml", "rb") as handle:
        license_field = tomllib.load(handle).get("project", {}).get("license")
    return license_field if isinstance(license_field, str) else None


def spdx_ids(expression: str) -> set[str]:
    """Upper-cased license ids of an SPDX expression (operators and parentheses dropped)."""
    tokens = (t.upper() for t in re.findall(r"[A-Za-z0-9.+-]+", expression))
    return {t for t in tokens if t not in _NOT_SPDX_IDS}


def check_license_expression(expression: str | None, manifest: dict | None) -> None:
    """Fail when a vendored op's SPDX id is missing from ``expression`` (``project.license``)."""
    if expression is None:
        return
    declared = spdx_ids(expression)
    for op, entry in recorded_licenses(manifest).items():
        spdx = entry["spdx"]
        if spdx.upper() == "NOASSERTION":
            continue
        if not spdx_ids(spdx) <= declared:
            raise LicenseConfigError(
                f"vendored op {op!r} is licensed {spdx!r}, which pyproject.toml's "
                f"project.license {expression!r} does not include; set it to "
                f"'{expression} AND {spdx}'"
            )


def license_files(root: Path) -> list[str]:
    """Every license file the distribution carries, root-relative, ours first."""
    for name in OWN_LICENSE_FILES:
        if not (root / name).is_file():
            raise LicenseConfigError(f"{name} is missing from {root}")
    manifest = read_vendor_manifest(root)
    check_license_expression(declared_license_expression(root), manifest)
    return [*OWN_LICENSE_FILES, *vendored_license_files(root, manifest)]


if __name__ == "__main__":
    try:
        files = license_files(ROOT)
    except LicenseConfigError as exc:
        sys.exit(f"setup.py: {exc}")
    setup(license_files=files)
