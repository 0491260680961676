"""Checks against the downstream git repository: attributes that rewrite bytes, ignore rules."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .errors import VendorError

#: Written as ``<vendor>/.gitattributes``: git stores vendored bytes exactly as they are.
GITATTRIBUTES = (
    b"# Written by tools/vendor_cake.py: git must store vendored files byte for byte.\n"
    b"* -text -filter -ident -working-tree-encoding linguist-vendored\n"
)
#: Written as ``<vendor>/.gitignore``: the tool's lock file and transaction directory.
GITIGNORE = b"# Written by tools/vendor_cake.py.\n/.vendor.lock\n/.vendor-txn/\n"

_REWRITING = ("text", "filter", "ident", "working-tree-encoding")


def git_toplevel(path: Path) -> Path | None:
    """Top directory of the git work tree holding ``path`` (None when not in one)."""
    probe = path if path.is_dir() else path.parent
    while not probe.exists():
        probe = probe.parent
    result = subprocess.run(
        ["git", "-C", str(probe), "rev-parse", "--show-toplevel"],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        return None
    return Path(result.stdout.strip())


def _git_stdin(top: Path, args: list[str], paths: list[str]) -> str:
    result = subprocess.run(
        ["git", "-C", str(top), *args],
        input="\0".join(paths) + "\0", capture_output=True, text=True, check=False,
    )
    if result.returncode not in (0, 1):
        raise VendorError(f"git {' '.join(args)} failed in {top}: {result.stderr.strip()}")
    return result.stdout


def check_downstream(vendor_dir: Path, rel_paths: list[str]) -> list[str]:
    """Problems with vendored paths as the downstream repo sees them (empty: fine or no repo).

    A path is a problem when git would rewrite its bytes on ``git add`` (``text`` not unset,
    or ``filter`` / ``ident`` / ``working-tree-encoding`` set) or when it is git-ignored.
    """
    top = git_toplevel(vendor_dir)
    if top is None or not rel_paths:
        return []
    base = os.path.relpath(os.path.realpath(vendor_dir), os.path.realpath(top))
    repo_paths = [f"{Path(base).as_posix()}/{p}" for p in rel_paths]
    problems: list[str] = []
    out = _git_stdin(top, ["check-attr", "-z", "--stdin", *_REWRITING], repo_paths)
    fields = out.split("\0")
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = fields[i : i + 3]
        bad = value != "unset" if attr == "text" else value not in ("unset", "unspecified")
        if bad:
            problems.append(f"{path}: attribute {attr}={value} would rewrite its bytes on git add")
    out = _git_stdin(top, ["check-ignore", "--no-index", "-z", "--stdin", "-v"], repo_paths)
    fields = out.split("\0")
    for i in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[i : i + 4]
        problems.append(f"{path}: git-ignored downstream by {source}:{line} ({pattern})")
    return problems
