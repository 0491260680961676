"""Helpers of the JIT / CLI tests and benchmarks: vendor directories, small module records,
and nvcc availability."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from miles_ext_kernels.cake.packages.records import ModuleRecord

FWD_MODULE = "cake_rmsnorm_train_1af0069a0ec96fb8b742"  # fwd_small, hidden 512
BWD_MODULE = "cake_rmsnorm_train_01036297dc6e647b9e56"  # bwd_main, hidden 512


def nvcc_available() -> bool:
    """True when an nvcc can be found (CUDA_HOME or PATH)."""
    from miles_ext_kernels.cake.jit.toolchain import ToolchainError, find_nvcc

    try:
        find_nvcc()
    except ToolchainError:
        return False
    return shutil.which("g++") is not None


needs_nvcc = pytest.mark.skipif(not nvcc_available(), reason="needs nvcc (CUDA toolkit) and g++")


def vendored_package(vendor_dir: Path) -> Any:
    """The vendored rmsnorm package of ``vendor_dir`` (through the runtime's discovery)."""
    from miles_ext_kernels.cake.packages import clear_discovery_cache, discover_packages

    clear_discovery_cache()
    found = [p for p in discover_packages(vendor_dir, include_first_party=False)
             if p.op == "rmsnorm"]
    assert len(found) == 1, found
    return found[0]


def record_dict(**overrides: Any) -> dict[str, Any]:
    """A valid 16-key forward record (upstream's shape) with ``overrides`` applied."""
    raw: dict[str, Any] = {
        "kernel": "demo_fwd",
        "kernel_symbol": "kernel_demo_fwd",
        "sources": ["csrc/demo/demo_fwd_kernel.cu", "csrc/demo/demo_fwd_binding.cu"],
        "source_sha256": {"csrc/demo/demo_fwd_kernel.cu": "a" * 64,
                          "csrc/demo/demo_fwd_binding.cu": "b" * 64},
        "arches": ["sm_100a", "sm_103a"],
        "cache_names": {"sm_100a": "demo_fwd_sm_100a", "sm_103a": "demo_fwd_sm_103a"},
        "compile_flags": [],
        "ffi_entry": "run",
        "hidden": 512,
        "role": "fwd_small",
        "arg_plan": [("buffer", "x"), ("buffer", "u"), ("buffer", "w"), ("buffer", "y"),
                     ("buffer", "h_new"), ("buffer", "r"), ("parameter", "T"),
                     ("parameter", "x_stride"), ("parameter", "u_stride"), ("parameter", "eps"),
                     ("grid", "grid_x"), ("grid", "grid_y"), ("grid", "grid_z")],
        "logical": {"x": "x", "u": "u", "w": "w", "y": "y", "h_new": "h_new", "r": "r",
                    "T": "rows", "x_stride": "x_stride", "u_stride": "u_stride", "eps": "eps"},
        "launch": {"block": (256, 1, 1), "cooperative": False},
        "grid_rule": {"kind": "rows_per_cta", "rows_per_cta": 8, "grid_limit": 0,
                      "grid_per_sm": 0},
        "select_rule": None,
        "workspace_rule": None,
    }
    raw.update(overrides)
    return raw


def make_record(name: str = "demo_fwd", **overrides: Any) -> ModuleRecord:
    """A validated ``ModuleRecord`` built from :func:`record_dict`."""
    return ModuleRecord.from_mapping("demo", name, record_dict(**overrides))


def private_vendor_dir(request: pytest.FixtureRequest, dest: Path) -> Path:
    """A private, modifiable copy of the ``vendored_rmsnorm`` fixture (vendored from the
    upstream wheel's files with the real vendoring tool)."""
    source = Path(request.getfixturevalue("vendored_rmsnorm"))
    shutil.copytree(source, dest, symlinks=True)
    return dest


def build_with_extra_arch(package: Any, record: Any, arch: str, *, jobs: int = 2,
                          slots: Any = None) -> Path:
    """Build ``record``'s sources for ``arch`` even when the table does not list that arch
    (the brief's "all 21 kernels compile for sm_100a" check). Integrity is checked on the
    package's own record; only the arch list is extended. Returns the cached .so."""
    import dataclasses
    from types import MappingProxyType

    from miles_ext_kernels.cake.jit import loader
    from miles_ext_kernels.cake.jit.build import build_shared_object
    from miles_ext_kernels.cake.jit.cache import get_or_build

    sources = loader.verified_sources(package, record)
    if arch not in record.arches:
        record = dataclasses.replace(
            record, arches=(*record.arches, arch),
            cache_names=MappingProxyType({**record.cache_names, arch: f"{record.kernel}_{arch}"}))
    spec = loader.build_spec(package, record, arch, sources)
    entry = loader.cache_entry_for(package, record, spec)
    return get_or_build(entry, lambda out: build_shared_object(spec, out, jobs=jobs,
                                                               slots=slots)).so_path
