"""CUDA toolchain discovery: nvcc, its version and targets, the runtime library dir, tvm-ffi.

Everything here is probed once per nvcc path and cached for the process. Nothing needs a GPU.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CUDA_HOME_ENVS = ("CUDA_HOME", "CUDA_PATH")
HOST_COMPILER_ENV = "MILES_EXT_KERNELS_HOST_CXX"
DEFAULT_HOST_COMPILER = "g++"
_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")
_VERSION_RE = re.compile(r"release\s+(\d+\.\d+),\s*V(\d+(?:\.\d+)+)")


class ToolchainError(RuntimeError):
    """The CUDA toolchain is missing, unusable or cannot target the requested architecture."""


@dataclass(frozen=True)
class Toolchain:
    """One probed nvcc installation."""

    nvcc: Path
    version: str
    release: str
    cuda_root: Path
    cudart_dir: Path
    host_compiler: str
    gpu_codes: frozenset[str]
    gpu_archs: frozenset[str]

    def can_target(self, arch: str) -> bool:
        """True when this nvcc can generate code for ``arch`` (``sm_100a``, ``sm_90``, ...)."""
        match = _ARCH_RE.match(arch)
        if match is None:
            return False
        number, suffix = match.groups()
        if suffix and int(number) < 90:
            return False
        return f"sm_{number}" in self.gpu_codes and f"compute_{number}" in self.gpu_archs

    def require_arch(self, arch: str) -> None:
        """Raise ``ToolchainError`` naming ``arch`` and the nvcc version when it cannot be built."""
        if _ARCH_RE.match(arch) is None:
            raise ToolchainError(
                f"arch {arch!r} is not a CUDA architecture name "
                "(expected e.g. sm_100a, sm_90a, sm_80)"
            )
        if not self.can_target(arch):
            targets = ", ".join(sorted(self.gpu_codes, key=_arch_sort_key))
            raise ToolchainError(
                f"nvcc {self.version} ({self.nvcc}) cannot target {arch}; it targets {targets}. "
                f"Install a CUDA toolkit whose nvcc lists {arch.rstrip('af')} in --list-gpu-code "
                f"and point CUDA_HOME at it."
            )


def _arch_sort_key(code: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", code)
    return (int(digits) if digits else 0, code)


def find_nvcc() -> Path:
    """Locate nvcc: ``$CUDA_HOME/bin/nvcc`` (or ``$CUDA_PATH``) first, then ``PATH``."""
    for env in CUDA_HOME_ENVS:
        home = os.environ.get(env)
        if home:
            candidate = Path(home) / "bin" / "nvcc"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which("nvcc")
    if found:
        return Path(found)
    raise ToolchainError(
        "nvcc was not found: set CUDA_HOME to a CUDA toolkit (12.8 or newer) or put nvcc on PATH"
    )


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    except OSError as exc:
        raise ToolchainError(f"cannot run {shlex.join(cmd)}: {exc}") from exc


def _probe_lines(nvcc: Path, option: str) -> frozenset[str]:
    result = _run([str(nvcc), option])
    if result.returncode != 0:
        raise ToolchainError(f"{nvcc} {option} failed: {result.stderr.strip()}")
    return frozenset(line.strip() for line in result.stdout.splitlines() if line.strip())


def _probe_version(nvcc: Path) -> tuple[str, str]:
    result = _run([str(nvcc), "--version"])
    match = _VERSION_RE.search(result.stdout)
    if result.returncode != 0 or match is None:
        raise ToolchainError(f"cannot read the version of {nvcc}: {result.stdout}{result.stderr}")
    return match.group(2), match.group(1)


def _probe_dryrun(nvcc: Path) -> tuple[Path | None, list[Path]]:
    """The toolkit root (``TOP``) and library dirs (``LIBRARIES``) nvcc itself would use."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cu"
        src.write_text("")
        result = _run([str(nvcc), "-v", "--dryrun", "-c", str(src), "-o", str(Path(tmp) / "p.o")])
    top: Path | None = None
    libs: list[Path] = []
    for line in (result.stdout + result.stderr).splitlines():
        line = line.removeprefix("#$ ").strip()
        if line.startswith("TOP="):
            top = Path(os.path.normpath(line[4:].strip().strip('"')))
        elif line.startswith("LIBRARIES="):
            for token in shlex.split(line[len("LIBRARIES="):]):
                if token.startswith("-L"):
                    libs.append(Path(os.path.normpath(token[2:])))
    return top, libs


def _find_cudart_dir(nvcc: Path, top: Path | None, libs: list[Path]) -> Path:
    roots = [top] if top is not None else []
    roots.append(nvcc.resolve().parent.parent)
    candidates = [r / "lib64" for r in roots] + [p for p in libs if p.name != "stubs"]
    for root in roots:
        candidates.extend(sorted((root / "targets").glob("*/lib")))
    for directory in candidates:
        if any(directory.glob("libcudart.so*")):
            return directory.resolve()
    looked = ", ".join(str(c) for c in candidates)
    raise ToolchainError(f"libcudart.so of {nvcc} was not found; looked in: {looked}")


def _find_host_compiler() -> str:
    name = os.environ.get(HOST_COMPILER_ENV, DEFAULT_HOST_COMPILER)
    found = shutil.which(name)
    if found is None:
        raise ToolchainError(
            f"host compiler {name!r} was not found on PATH (set {HOST_COMPILER_ENV} to choose one)"
        )
    return found


_CACHE: dict[Path, Toolchain] = {}
_CACHE_LOCK = threading.Lock()


def probe_toolchain(nvcc: Path | None = None) -> Toolchain:
    """Probe (once per nvcc path, then cached) the toolchain that builds Cake programs."""
    path = Path(nvcc) if nvcc is not None else find_nvcc()
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
        if cached is not None:
            return cached
        # four independent nvcc runs, in parallel: this is most of a warm module load
        with ThreadPoolExecutor(max_workers=4) as pool:
            version_future = pool.submit(_probe_version, path)
            dryrun_future = pool.submit(_probe_dryrun, path)
            codes_future = pool.submit(_probe_lines, path, "--list-gpu-code")
            archs_future = pool.submit(_probe_lines, path, "--list-gpu-arch")
            version, release = version_future.result()
            top, libs = dryrun_future.result()
            gpu_codes, gpu_archs = codes_future.result(), archs_future.result()
        toolchain = Toolchain(
            nvcc=path,
            version=version,
            release=release,
            cuda_root=top if top is not None else path.resolve().parent.parent,
            cudart_dir=_find_cudart_dir(path, top, libs),
            host_compiler=_find_host_compiler(),
            gpu_codes=gpu_codes,
            gpu_archs=gpu_archs,
        )
        _CACHE[path] = toolchain
        return toolchain


def clear_toolchain_cache() -> None:
    """Forget probed toolchains (after changing CUDA_HOME in a running process)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def tvm_ffi_include_dir() -> Path:
    """tvm-ffi's C++ include directory (dlpack's headers live inside it)."""
    from tvm_ffi import libinfo

    path = Path(libinfo.find_include_path())
    if not (path / "tvm" / "ffi").is_dir():
        raise ToolchainError(f"tvm-ffi include directory {path} holds no tvm/ffi headers")
    return path


def tvm_ffi_version() -> str:
    """Installed apache-tvm-ffi version (part of every cache key)."""
    import tvm_ffi

    return str(tvm_ffi.__version__)
