"""Compile real upstream Cake modules through our JIT path for sm_100a, load them with tvm-ffi.

No GPU is needed: the .so carries an rpath to the toolkit's libcudart, and the tvm-ffi
symbols resolve when tvm-ffi loads the module.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from jit_support import (
    BWD_MODULE,
    FWD_MODULE,
    build_with_extra_arch,
    needs_nvcc,
    private_vendor_dir,
    vendored_package,
)

from miles_ext_kernels.cake.jit import loader
from miles_ext_kernels.cake.jit.cache import CACHE_ENV
from miles_ext_kernels.cake.jit.toolchain import probe_toolchain

pytestmark = needs_nvcc
ARCH = "sm_100a"


@pytest.fixture(scope="module")
def jit_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """(package, cache dir) with a private vendor copy and a private, initially empty cache."""
    base = tmp_path_factory.mktemp("jit-compile")
    vendor = private_vendor_dir(request, base / "vendor")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(base / "cache"))
        loader.clear_loaded_modules()
        yield vendored_package(vendor), base / "cache"
        loader.clear_loaded_modules()


def _runpath(so: Path) -> str:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf not installed")
    out = subprocess.run([readelf, "-d", str(so)], capture_output=True, text=True, check=True)
    return "\n".join(line for line in out.stdout.splitlines() if "PATH" in line)


def test_forward_and_backward_modules_build_and_load(jit_env) -> None:
    import tvm_ffi

    package, cache = jit_env
    for name, role in ((FWD_MODULE, "fwd"), (BWD_MODULE, "bwd")):
        record = package.modules[name]
        assert record.role.startswith(role)
        outcome = loader.ensure_built(package, record, ARCH)
        assert outcome.built and outcome.so_path.is_file()
        assert outcome.so_path.is_relative_to(cache)
        assert str(probe_toolchain().cudart_dir) in _runpath(outcome.so_path)
        module = tvm_ffi.load_module(str(outcome.so_path))
        run = loader.resolve_entry(module, record)
        assert callable(run)
        with pytest.raises(loader.EntryError, match="no function 'not_there'"):
            loader.resolve_entry(module, dataclasses.replace(record, ffi_entry="not_there"))


def test_warm_load_uses_the_cache_and_is_memoised(jit_env) -> None:
    package, _ = jit_env
    record = package.modules[FWD_MODULE]
    outcome = loader.ensure_built(package, record, ARCH)
    assert not outcome.built
    first = loader.load_module(package, record, ARCH)
    assert loader.load_module(package, record, ARCH) is first
    assert callable(loader.resolve_entry(first, record))


def test_records_sharing_a_kernel_share_one_cache_entry(jit_env) -> None:
    package, _ = jit_env
    siblings = [r for r in package.modules.values()
                if r.kernel == "cake_rmsnorm_train_b6ac896edca3b49b37a9"]
    assert len(siblings) >= 2
    spec_paths = {loader.cache_entry_for(package, r, loader.build_spec(
        package, r, ARCH, [package.source_path(s) for s in r.sources])).directory
        for r in siblings}
    assert len(spec_paths) == 1


def test_modified_source_is_refused_before_any_build(
    jit_env, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from miles_ext_kernels.cake.integrity import IntegrityError

    _, cache = jit_env
    vendor = private_vendor_dir(request, tmp_path / "vendor")
    package = vendored_package(vendor)
    record = package.modules["cake_rmsnorm_train_39325dca02d9cc2ad87d"]
    kernel = package.source_path(record.sources[0])
    kernel.write_bytes(kernel.read_bytes() + b"\n// local edit\n")
    before = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
    with pytest.raises(IntegrityError) as info:
        loader.load_module(package, record, ARCH)
    assert kernel.name in str(info.value)
    assert (sorted(p.name for p in cache.iterdir()) if cache.exists() else []) == before


@pytest.mark.slow
def test_all_21_upstream_kernels_compile_for_sm_100a(jit_env) -> None:
    """Every kernel/binding pair of the wheel compiles for sm_100a through our path; kernels
    the table lists only for sm_103a / sm_107a are compiled for sm_100a as well (the brief's
    measurement: all 21 compile for sm_100a)."""
    import tvm_ffi

    package, _ = jit_env
    kernels: dict[str, object] = {}
    for record in package.modules.values():
        kernels.setdefault(record.kernel, record)
    assert len(kernels) == 21
    records = [record for _, record in sorted(kernels.items())]
    slots = threading.BoundedSemaphore(2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        so_paths = list(pool.map(
            lambda r: build_with_extra_arch(package, r, ARCH, jobs=2, slots=slots), records))
    for record, so_path in zip(records, so_paths, strict=True):
        module = tvm_ffi.load_module(str(so_path))
        assert callable(loader.resolve_entry(module, record)), record.kernel
    assert len(set(so_paths)) == 21


def test_compile_error_carries_module_arch_command_and_stderr(tmp_path: Path) -> None:
    from miles_ext_kernels.cake.jit.build import BuildError, BuildSpec, build_shared_object

    broken = tmp_path / "broken_kernel.cu"
    broken.write_text("__global__ void k() { this_is_not_declared(); }\n")
    spec = BuildSpec(module="broken_module", arch=ARCH, sources=(broken,),
                     include_dirs=(tmp_path,), nvcc_flags=("-gencode=arch=compute_100a,"
                                                            "code=sm_100a",),
                     toolchain=probe_toolchain())
    (tmp_path / "out").mkdir()
    with pytest.raises(BuildError) as info:
        build_shared_object(spec, tmp_path / "out" / "module.so")
    message = str(info.value)
    assert "broken_module" in message and ARCH in message
    assert "this_is_not_declared" in message and "nvcc" in message
    assert not list(tmp_path.glob("**/*.o"))
