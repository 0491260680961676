"""Build a throwaway upstream git checkout from the published flashinfer-python wheel.

The Cake RMSNorm training files of ``flashinfer-python`` are laid out at their repository
paths (``flashinfer/data/csrc/...`` -> ``csrc/...``, ``flashinfer/data/include/...`` ->
``include/...``) in a fresh git repository and committed with fixed author data and dates, so
the commit id is the same on every machine. Used by the tests and by the README's main job on
machines that cannot clone upstream.

    python tools/fi_checkout_from_wheel.py ../flashinfer            # downloads the wheel with pip
    python tools/fi_checkout_from_wheel.py ../flashinfer --wheel W  # uses a wheel already on disk
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import click

WHEEL_REQUIREMENT = "flashinfer-python==0.7.2.post1"
FIXED_DATE = "2026-01-01T00:00:00+00:00"
_WHEEL_PREFIXES = (
    ("flashinfer/data/csrc/", "csrc/"),
    ("flashinfer/data/include/", "include/"),
)
_WANTED = (
    "flashinfer/cake_rmsnorm_train.py",
    "flashinfer/jit/cake_rmsnorm_train.py",
    "flashinfer/data/csrc/cake_rmsnorm_train/",
    "flashinfer/data/csrc/tvm_ffi_utils.h",
    "flashinfer/data/include/flashinfer/layout.cuh",
)


def repo_path_for_wheel_member(member: str) -> str:
    """Map a wheel member path onto its upstream repository path."""
    for wheel_prefix, repo_prefix in _WHEEL_PREFIXES:
        if member.startswith(wheel_prefix):
            return repo_prefix + member[len(wheel_prefix) :]
    return member


def download_wheel(dest: Path) -> Path:
    """Download the pinned flashinfer-python wheel into ``dest`` with pip; return its path."""
    dest.mkdir(parents=True, exist_ok=True)
    found = sorted(dest.glob("flashinfer_python-0.7.2.post1-*.whl"))
    if found:
        return found[0]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest),
         WHEEL_REQUIREMENT],
        check=True,
    )
    found = sorted(dest.glob("flashinfer_python-0.7.2.post1-*.whl"))
    if not found:
        raise FileNotFoundError(f"pip download did not produce a wheel in {dest}")
    return found[0]


def extract_cake_files(wheel: Path) -> dict[str, bytes]:
    """Return the Cake RMSNorm training files of ``wheel`` keyed by upstream repository path."""
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            name = info.filename
            if name.endswith("/"):
                continue
            if any(name == w or (w.endswith("/") and name.startswith(w)) for w in _WANTED):
                files[repo_path_for_wheel_member(name)] = archive.read(info)
        license_members = [
            n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")
        ]
        if license_members:
            files["LICENSE"] = archive.read(license_members[0])
    if not any(p.startswith("csrc/cake_rmsnorm_train/") for p in files):
        raise ValueError(f"{wheel} holds no Cake RMSNorm training sources")
    return files


def make_checkout(files: dict[str, bytes], dest: Path) -> str:
    """Write ``files`` into a new git repository at ``dest``, commit them, return the commit id."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    for rel, data in sorted(files.items()):
        target = dest.joinpath(*PurePosixPath(rel).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="upstream-fixture",
        GIT_AUTHOR_EMAIL="fixture@invalid",
        GIT_COMMITTER_NAME="upstream-fixture",
        GIT_COMMITTER_EMAIL="fixture@invalid",
        GIT_AUTHOR_DATE=FIXED_DATE,
        GIT_COMMITTER_DATE=FIXED_DATE,
    )

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main", *args],
            cwd=dest, env=env, check=True, capture_output=True, text=True,
        ).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    message = f"Cake RMSNorm training files of {WHEEL_REQUIREMENT}"
    git("commit", "-q", "--no-gpg-sign", "-m", message)
    return git("rev-parse", "HEAD")


@click.command()
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--wheel", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Use this flashinfer-python wheel instead of downloading it.")
def main(dest: Path, wheel: Path | None) -> None:
    """Create DEST as a git checkout holding upstream's Cake RMSNorm training files."""
    if wheel is None:
        with tempfile.TemporaryDirectory() as tmp:
            files = extract_cake_files(download_wheel(Path(tmp)))
    else:
        files = extract_cake_files(wheel)
    commit = make_checkout(files, dest)
    click.echo(commit)


if __name__ == "__main__":
    main()
