"""Benchmark the vendoring tool: vendor 1,200 files from a fixture upstream, then verify them.

    python benchmarks/vendor_bench.py [--files 1200] [--repeats 5]

Builds a throwaway upstream git repository (1,200 files of 2-16 KiB in nested directories,
some executable) and a downstream root in a temporary directory, then times (wall clock,
median of the repeats): a first vendoring into an empty vendor dir, a no-op re-run, an update
touching 10% of the files, offline ``verify``, and ``audit`` against upstream. Prints a table.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from cake_vendor.api import vendor_dir_for, vendor_op  # noqa: E402
from cake_vendor.audit import audit_vendor  # noqa: E402
from cake_vendor.verify import verify_vendor  # noqa: E402


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@invalid",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    return subprocess.run(["git", "-c", "core.autocrlf=false", *args], cwd=repo, env=env,
                          check=True, capture_output=True, text=True).stdout.strip()


def make_upstream(path: Path, n_files: int, seed: int = 0) -> tuple[str, str]:
    """Create the fixture upstream; return (first commit, second commit with 10% changed)."""
    rng = random.Random(seed)
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    files = []
    for i in range(n_files):
        rel = Path("flashinfer/bench_pkg") / f"d{i % 12}" / f"s{i % 7}" / f"file_{i:05d}.cu"
        files.append(rel)
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(rng.randbytes(rng.randint(2048, 16384)))
        if i % 25 == 0:
            (path / rel).chmod(0o755)
    (path / "LICENSE").write_text("Apache License\nVersion 2.0, January 2004\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "first")
    first = _git(path, "rev-parse", "HEAD")
    for rel in files[:: 10]:
        (path / rel).write_bytes(rng.randbytes(4096))
    _git(path, "commit", "-q", "-am", "second")
    return first, _git(path, "rev-parse", "HEAD")


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@click.command()
@click.option("--files", "n_files", default=1200, show_default=True)
@click.option("--repeats", default=5, show_default=True)
def main(n_files: int, repeats: int) -> None:
    """Time vendoring and verification of N_FILES fixture files."""
    rows: dict[str, list[float]] = {k: [] for k in
                                    ("vendor (fresh)", "vendor (no-op)", "vendor (10% update)",
                                     "verify", "audit")}
    with tempfile.TemporaryDirectory() as tmp:
        upstream = Path(tmp) / "upstream"
        first, second = make_upstream(upstream, n_files)
        packages = ("flashinfer/bench_pkg",)
        for r in range(repeats):
            root = Path(tmp) / f"down{r}"
            (root / "miles_ext_kernels" / "cake").mkdir(parents=True)  # a checkout's layout
            _git(root, "init", "-q")
            vdir = vendor_dir_for(root)
            rows["vendor (fresh)"].append(
                _time(lambda: vendor_op(root, upstream, first, "bench", packages)))  # noqa: B023
            rows["vendor (no-op)"].append(
                _time(lambda: vendor_op(root, upstream, first, "bench", packages)))  # noqa: B023
            rows["vendor (10% update)"].append(
                _time(lambda: vendor_op(root, upstream, second, "bench", packages)))  # noqa: B023
            report = verify_vendor(vdir)
            assert report.clean and report.checked == n_files + 1
            rows["verify"].append(_time(lambda: verify_vendor(vdir)))  # noqa: B023
            rows["audit"].append(_time(lambda: audit_vendor(vdir, upstream)))  # noqa: B023
    click.echo(f"{n_files} files + LICENSE, {repeats} repeats, {os.cpu_count()} CPUs, "
               f"Python {sys.version.split()[0]}")
    click.echo(f"{'step':<22}{'median s':>10}{'min s':>10}{'max s':>10}")
    for name, times in rows.items():
        click.echo(f"{name:<22}{statistics.median(times):>10.3f}{min(times):>10.3f}"
                   f"{max(times):>10.3f}")


if __name__ == "__main__":
    main()
