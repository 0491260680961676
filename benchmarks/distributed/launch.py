"""The torchrun command line and environment of the distributed check (tests, docs, CI)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchmarks.distributed.collectives import MULTICAST_OFF_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE = "benchmarks.distributed.two_gpu_check"
#: The tiny CPU configuration of the smoke test (H=64, 2 steps).
CPU_SMOKE_ARGS: tuple[str, ...] = (
    "--device", "cpu", "--hidden", "64", "--steps", "2", "--batch", "2", "--seq", "16",
    "--vocab", "128", "--sp-rows", "256", "--sp-hidden", "128",
)


def torchrun_command(nproc: int, out: Path, args: Sequence[str] = ()) -> list[str]:
    """``python -m torch.distributed.run --standalone --nproc_per_node=N -m <check> --out``."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"nproc must be a positive int, got {nproc!r}")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc_per_node={nproc}", "-m", MODULE, "--out", str(out), *args]


def launch_env(cache: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) plus multicast off, the JIT cache and the repo path."""
    env = dict(os.environ if base is None else base)
    env.update(MULTICAST_OFF_ENV)
    env["MILES_EXT_KERNELS_CACHE"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_check(
    nproc: int, out: Path, cache: Path, args: Sequence[str] = (), timeout_s: float = 600.0
) -> subprocess.CompletedProcess[str]:
    """Launch the check with torchrun from the repository root and wait (output captured)."""
    cache.mkdir(parents=True, exist_ok=True)
    return subprocess.run(torchrun_command(nproc, out, args), cwd=REPO_ROOT,
                          env=launch_env(cache), capture_output=True, text=True,
                          timeout=timeout_s, check=False)
