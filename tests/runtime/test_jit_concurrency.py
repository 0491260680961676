"""Several processes build the same module at once: exactly one compiles, all load it.

Compiles are counted by a CUDA_HOME whose ``bin/nvcc`` logs every ``-c`` invocation and then
runs the real nvcc.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest
from jit_support import FWD_MODULE, needs_nvcc, private_vendor_dir

from miles_ext_kernels.cake.jit.toolchain import find_nvcc

pytestmark = needs_nvcc
PROCESSES = 4
ARCH = "sm_100a"


def _counting_cuda_home(home: Path, real_nvcc: Path, log: Path) -> Path:
    nvcc = home / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --dryrun "*) ;; *" -c "*) echo "$$ $*" >> "' + str(log) + '" ;; esac\n'
        f'exec "{real_nvcc}" "$@"\n'
    )
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR)
    return home


def _build_and_load(vendor: str, cache: str, cuda_home: str, barrier, results) -> None:
    """Child process: wait for the others, then build-or-load one module and resolve ``run``."""
    os.environ["MILES_EXT_KERNELS_CACHE"] = cache
    os.environ["CUDA_HOME"] = cuda_home
    try:
        import tvm_ffi
        from jit_support import vendored_package

        from miles_ext_kernels.cake.jit import loader

        package = vendored_package(Path(vendor))
        record = package.modules[FWD_MODULE]
        barrier.wait(timeout=120)
        outcome = loader.ensure_built(package, record, ARCH)
        module = tvm_ffi.load_module(str(outcome.so_path))
        entry = loader.resolve_entry(module, record)
        results.put((os.getpid(), outcome.built, str(outcome.so_path), callable(entry), None))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        results.put((os.getpid(), False, "", False, f"{type(exc).__name__}: {exc}"))


def test_processes_starting_together_build_once_and_all_load(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    vendor = private_vendor_dir(request, tmp_path / "vendor")
    log = tmp_path / "nvcc-compiles.log"
    home = _counting_cuda_home(tmp_path / "cuda", find_nvcc().resolve(), log)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=_build_and_load,
                    args=(str(vendor), str(tmp_path / "cache"), str(home), barrier, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert [o[4] for o in outcomes] == [None] * PROCESSES, outcomes
    assert sum(1 for o in outcomes if o[1]) == 1, outcomes
    assert len({o[2] for o in outcomes}) == 1
    assert all(o[3] for o in outcomes)
    compiles = log.read_text().splitlines()
    assert len(compiles) == 2, compiles  # kernel.cu + binding.cu, once
    assert all(FWD_MODULE in line for line in compiles)
