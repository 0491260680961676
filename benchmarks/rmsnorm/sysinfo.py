"""What the numbers were measured on: GPU, clocks, driver and software versions."""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import shutil
import subprocess
from pathlib import Path

import torch

NVIDIA_SMI_FIELDS: tuple[str, ...] = (
    "name", "driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem",
    "power.draw", "power.limit", "temperature.gpu", "persistence_mode",
)
PACKAGES: tuple[str, ...] = (
    "torch", "triton", "liger-kernel", "quack-kernels", "nvidia-cutlass-dsl",
    "apache-tvm-ffi", "miles-ext-kernels", "matplotlib",
)


def nvidia_smi(index: int = 0, timeout_s: float = 10.0) -> dict[str, str] | None:
    """One GPU's ``nvidia-smi --query-gpu`` fields, or None when nvidia-smi is absent/fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, f"--id={index}", f"--query-gpu={','.join(NVIDIA_SMI_FIELDS)}",
             "--format=csv,noheader"],
            capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[:300]}
    values = [v.strip() for v in proc.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(NVIDIA_SMI_FIELDS, values, strict=False))


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that matter to the numbers (None = absent)."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit(repo: Path | None = None) -> str | None:
    """The checkout's HEAD commit (with ``+dirty`` when the tree has changes), if any."""
    root = repo or Path(__file__).resolve().parents[2]
    git = shutil.which("git")
    if git is None:
        return None
    try:
        head = subprocess.run([git, "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run([git, "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


KERNEL_MANIFESTS: dict[str, str] = {
    "first_party": "miles_ext_kernels/kernels/rmsnorm/build.json",
    "vendored": "miles_ext_kernels/cake/_vendor/VENDORED.json",
}


def kernel_sources(root: Path | None = None) -> dict[str, str | None]:
    """sha256 (first 16 hex digits) of each kernel manifest, or None where absent.

    Each manifest lists the digest of every source it covers (the first-party ``build.json``
    the sha256 of every .cu/.cuh/.h file, ``VENDORED.json`` the blob id of every vendored
    file), so this names exactly which kernel sources were measured — also where the git
    metadata of the measuring machine's copy is missing or stale.
    """
    base = root or Path(__file__).resolve().parents[2]
    fingerprints: dict[str, str | None] = {}
    for name, rel in KERNEL_MANIFESTS.items():
        path = base / rel
        try:
            fingerprints[name] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        except OSError:
            fingerprints[name] = None
    return fingerprints


def collect(device: torch.device) -> dict[str, object]:
    """Everything the report prints about the machine and software."""
    info: dict[str, object] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "packages": package_versions(),
        "git_commit": git_commit(),
        "kernel_sources": kernel_sources(),
        "device_type": device.type,
    }
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        info.update(
            gpu=props.name,
            capability=f"{props.major}.{props.minor}",
            sms=props.multi_processor_count,
            memory_gib=round(props.total_memory / 2**30, 1),
            l2_mib=round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
            nvidia_smi=nvidia_smi(index),
        )
    else:
        info.update(gpu=f"CPU ({platform.processor() or platform.machine()})", sms=None,
                    nvidia_smi=None)
    return info
