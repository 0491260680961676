"""Compile one module's sources with nvcc; link them into a shared object with the host compiler."""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from .toolchain import Toolchain

STDERR_TAIL_CHARS = 12000


class BuildError(RuntimeError):
    """nvcc or the host linker failed; the message names the module, arch, command and stderr."""


@dataclass(frozen=True)
class BuildSpec:
    """Everything needed to build one (module, arch) shared object."""

    module: str
    arch: str
    sources: tuple[Path, ...]
    include_dirs: tuple[Path, ...]
    nvcc_flags: tuple[str, ...]
    toolchain: Toolchain

    @property
    def link_flags(self) -> tuple[str, ...]:
        """Host link flags: the CUDA runtime, found again at load time through the rpath."""
        lib = str(self.toolchain.cudart_dir)
        return ("-shared", f"-L{lib}", "-lcudart", f"-Wl,-rpath,{lib}")


def object_name(index: int, source: Path) -> str:
    """Unique object file name of the ``index``-th source."""
    return f"{index:02d}_{source.stem}.o"


def compile_command(spec: BuildSpec, source: Path, obj: Path) -> list[str]:
    """nvcc command compiling ``source`` to the relocatable object ``obj`` (no -rdc)."""
    includes = [f"-I{d}" for d in spec.include_dirs]
    nvcc = str(spec.toolchain.nvcc)
    return [nvcc, "-c", *spec.nvcc_flags, *includes, str(source), "-o", str(obj)]


def link_command(spec: BuildSpec, objects: Sequence[Path], out: Path) -> list[str]:
    """Host-compiler command linking ``objects`` into ``out`` (``-shared ... -lcudart``)."""
    shared, *libs = spec.link_flags
    return [spec.toolchain.host_compiler, shared, "-o", str(out), *map(str, objects), *libs]


def _run_step(
    spec: BuildSpec, what: str, cmd: list[str], slots: threading.Semaphore | None
) -> None:
    with slots if slots is not None else nullcontext():
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise BuildError(
                f"{what} of module {spec.module} for {spec.arch} could not start: {exc}\n"
                f"command: {shlex.join(cmd)}"
            ) from exc
    if result.returncode != 0:
        output = (result.stderr or "") + (result.stdout or "")
        raise BuildError(
            f"{what} of module {spec.module} for {spec.arch} failed (exit {result.returncode})\n"
            f"command: {shlex.join(cmd)}\n{output[-STDERR_TAIL_CHARS:]}"
        )


def build_shared_object(
    spec: BuildSpec,
    out: Path,
    *,
    jobs: int = 2,
    slots: threading.Semaphore | None = None,
) -> float:
    """Build ``spec`` into ``out`` (objects go next to it, then are removed); return seconds.

    Sources of one module compile in parallel up to ``jobs`` at once; ``slots``, when given, is
    shared by concurrent module builds to bound the total number of compiler processes.
    """
    if not spec.sources:
        raise BuildError(f"module {spec.module} lists no sources")
    for source in spec.sources:
        if not source.is_file():
            raise BuildError(f"source {source} of module {spec.module} does not exist")
    start = time.perf_counter()
    out = Path(out)
    work = out.parent
    objects = [work / object_name(i, src) for i, src in enumerate(spec.sources)]
    workers = max(1, min(int(jobs), len(spec.sources)))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(_run_step, spec, f"nvcc compile of {src.name}",
                            compile_command(spec, src, obj), slots)
                for src, obj in zip(spec.sources, objects, strict=True)
            ]
            errors = [f.exception() for f in futures]
        failed = [e for e in errors if e is not None]
        if failed:
            raise BuildError("\n\n".join(str(e) for e in failed))
        _run_step(spec, "link", link_command(spec, objects, out), slots)
    finally:
        for obj in objects:
            if obj.exists():
                os.unlink(obj)
    return time.perf_counter() - start
