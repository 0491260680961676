"""Test helpers: vendored trees laid out from the upstream wheel's files, stand-in manifests,
synthetic build.json packages, and upstream's own loader executed with its imports stubbed."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path
from typing import Any

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    FileEntry,
    LicenseEntry,
    Manifest,
    OpEntry,
    PackageEntry,
    UpstreamInfo,
    dump_manifest,
)

UPSTREAM_TABLE = "flashinfer/jit/cake_rmsnorm_train.py"
# upstream package paths of the table-0.7 rmsnorm profile
TABLE_PACKAGES = (
    "flashinfer/cake_rmsnorm_train.py",
    "flashinfer/jit/cake_rmsnorm_train.py",
    "csrc/cake_rmsnorm_train",
    "csrc/tvm_ffi_utils.h",
    "include/flashinfer/layout.cuh",
)


def vendored_path(upstream_path: str) -> str:
    """Where the vendoring tool puts an upstream path (a leading ``flashinfer/`` is dropped)."""
    return upstream_path.removeprefix("flashinfer/")


def write_manifest(
    vendor_dir: Path,
    packages: dict[str, dict[str, bytes]],
    *,
    layout: str = "table-0.7",
    op: str = "rmsnorm",
) -> Path:
    """Write files (``{upstream package path: {upstream file path: bytes}}``) at their vendored
    paths and a VENDORED.json describing them; returns the vendor directory."""
    entries = []
    for upstream_pkg, files in packages.items():
        recorded = {}
        for upstream_file, data in sorted(files.items()):
            rel = vendored_path(upstream_file)
            target = vendor_dir.joinpath(*rel.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            recorded[rel] = FileEntry.from_bytes(data, "100644")
        entries.append(PackageEntry(
            upstream_path=upstream_pkg, vendored_path=vendored_path(upstream_pkg),
            object_id="0" * 40, type="tree" if len(files) > 1 else "blob", files=recorded,
        ))
    op_entry = OpEntry(ref="v0.7.2.post1", commit="c" * 40, tree="d" * 40, tool_version="test",
                       layout=layout, license=LicenseEntry("Apache-2.0", ()),
                       packages=tuple(entries))
    manifest = Manifest(upstream=UpstreamInfo("flashinfer", None, "sha1"), ops={op: op_entry})
    (vendor_dir / MANIFEST_NAME).write_bytes(dump_manifest(manifest))
    return vendor_dir


def vendor_table_layout(fi_files: dict[str, bytes], vendor_dir: Path) -> Path:
    """Lay the wheel's Cake files out as the tool vendors the table-0.7 rmsnorm op."""
    vendor_dir.mkdir(parents=True, exist_ok=True)
    packages: dict[str, dict[str, bytes]] = {}
    for pkg in TABLE_PACKAGES:
        packages[pkg] = {p: d for p, d in fi_files.items() if p == pkg or p.startswith(pkg + "/")}
    return write_manifest(vendor_dir, packages)


def load_upstream_loader(source: bytes, sm_count: int = 132) -> types.ModuleType:
    """Execute upstream's ``jit/cake_rmsnorm_train.py`` with its imports stubbed.

    ``tvm_ffi`` and the relative ``.env`` / ``.core`` imports resolve to fakes inside a
    synthetic package; nothing of flashinfer is imported. ``sm_count`` is replaced by a
    function returning the module attribute ``SM_UNDER_TEST`` (set it to change the count).
    """
    stub_pkg = "_fi_stub"
    package = types.ModuleType(stub_pkg)
    package.__path__ = []
    env = types.ModuleType(f"{stub_pkg}.env")
    env.FLASHINFER_CSRC_DIR = Path("/nonexistent")
    core = types.ModuleType(f"{stub_pkg}.core")
    core.JitSpec = object
    core.gen_jit_spec = lambda **kwargs: kwargs
    for arch in ("sm100a", "sm103a", "sm107a"):
        setattr(core, f"{arch}_nvcc_flags", [f"-gencode=arch=compute_{arch[2:]}"])
    tvm_ffi = types.ModuleType("tvm_ffi")
    saved = {name: sys.modules.get(name)
             for name in ("tvm_ffi", stub_pkg, f"{stub_pkg}.env", f"{stub_pkg}.core")}
    sys.modules.update({"tvm_ffi": tvm_ffi, stub_pkg: package, f"{stub_pkg}.env": env,
                        f"{stub_pkg}.core": core})
    try:
        module = types.ModuleType(f"{stub_pkg}.cake_rmsnorm_train")
        module.__package__ = stub_pkg
        exec(compile(source, UPSTREAM_TABLE, "exec"), module.__dict__)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    module.SM_UNDER_TEST = sm_count
    module.sm_count = lambda device_index: module.SM_UNDER_TEST
    return module


# ---------------------------------------------------------------- synthetic build.json packages

def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def fp_record(name: str, *, arches: list[str], role: str, grid_rule: dict[str, Any],
              workspace_rule: dict[str, Any] | None = None,
              select_rule: dict[str, Any] | None = None,
              hidden_rule: dict[str, int] | None = None,
              sources: dict[str, bytes]) -> dict[str, Any]:
    """A first-party module record (16 keys + optional hidden_rule) over ``sources``."""
    record: dict[str, Any] = {
        "kernel": name,
        "kernel_symbol": f"kernel_{name}",
        "sources": list(sources),
        "source_sha256": {path: sha256_hex(data) for path, data in sources.items()},
        "arches": arches,
        "cache_names": {arch: f"{name}_{arch}" for arch in arches},
        "compile_flags": [],
        "ffi_entry": "run",
        "hidden": None,
        "role": role,
        "arg_plan": [["buffer", "x"], ["parameter", "T"], ["parameter", "H"],
                     ["grid", "grid_x"], ["grid", "grid_y"], ["grid", "grid_z"]],
        "logical": {"x": "x", "T": "rows", "H": "hidden"},
        "launch": {"block": [256, 1, 1], "cooperative": grid_rule["kind"] == "chunk_bounded"},
        "grid_rule": grid_rule,
        "select_rule": select_rule,
        "workspace_rule": workspace_rule,
    }
    if hidden_rule is not None:
        record["hidden_rule"] = hidden_rule
    return record


def write_build_json_package(root: Path, *, name: str = "toy_rmsnorm",
                             mutate: Any = None) -> Path:
    """A small first-party package: fwd (two hidden ranges, two row ranges), bwd with
    fixed_chunks, bwd_nondet atomic; ``mutate(doc)`` may edit the document before writing."""
    root.mkdir(parents=True, exist_ok=True)
    sources = {}
    for stem in ("fwd_narrow", "fwd_wide", "fwd_big", "bwd", "bwd_nondet"):
        for part in ("kernel", "binding"):
            rel = f"csrc/{stem}_{part}.cu"
            data = f"// {stem} {part}\n".encode()
            (root / "csrc").mkdir(exist_ok=True)
            (root / rel).write_bytes(data)
            sources[rel] = data
    (root / "include").mkdir(exist_ok=True)
    (root / "include" / "toy.h").write_text("#pragma once\n")

    def src(stem: str) -> dict[str, bytes]:
        return {f"csrc/{stem}_{part}.cu": sources[f"csrc/{stem}_{part}.cu"]
                for part in ("kernel", "binding")}

    arches = ["sm_90a", "sm_100a"]
    modules = {
        "toy_fwd_narrow": fp_record(
            "toy_fwd_narrow", arches=arches, role="fwd_small", sources=src("fwd_narrow"),
            grid_rule={"kind": "rows_per_cta", "rows_per_cta": 4, "grid_limit": 0,
                       "grid_per_sm": 8},
            hidden_rule={"min": 64, "max": 1024}),
        "toy_fwd_wide": fp_record(
            "toy_fwd_wide", arches=arches, role="fwd_small", sources=src("fwd_wide"),
            grid_rule={"kind": "rows_per_cta", "rows_per_cta": 1, "grid_limit": 0,
                       "grid_per_sm": 16},
            hidden_rule={"min": 1032, "max": 8192},
            select_rule={"kind": "rows_between", "above": 0, "at_most": 4096}),
        "toy_fwd_big": fp_record(
            "toy_fwd_big", arches=["sm_100a"], role="fwd_main", sources=src("fwd_big"),
            grid_rule={"kind": "rows_per_cta", "rows_per_cta": 2, "grid_limit": 0,
                       "grid_per_sm": 4},
            hidden_rule={"min": 1032, "max": 8192},
            select_rule={"kind": "rows_between", "above": 4096, "at_most": None}),
        "toy_bwd": fp_record(
            "toy_bwd", arches=arches, role="bwd_main", sources=src("bwd"),
            grid_rule={"kind": "chunk_bounded", "ctas_per_sm": 2, "cooperative": True},
            workspace_rule={"kind": "fixed_chunks", "max_chunks": 256,
                            "min_rows_per_chunk": 16, "counters": 8,
                            "partial_dtype": "float64"}),
        "toy_bwd_nondet": fp_record(
            "toy_bwd_nondet", arches=arches, role="bwd_nondet", sources=src("bwd_nondet"),
            grid_rule={"kind": "rows_per_cta", "rows_per_cta": 8, "grid_limit": 0,
                       "grid_per_sm": 4},
            workspace_rule={"kind": "atomic"}),
    }
    fwd_90 = ["toy_fwd_narrow", "toy_fwd_wide"]
    fwd_100 = ["toy_fwd_narrow", "toy_fwd_wide", "toy_fwd_big"]
    doc = {
        "format": "miles-cake-build/1",
        "op": "rmsnorm",
        "name": name,
        "description": "toy package for adapter tests",
        "arch_by_capability": {"9.0": "sm_90a", "10.0": "sm_100a", "10.3": "sm_100a"},
        "hidden": {"min": 64, "max": 8192, "multiple_of": 8},
        "dtypes": {"x": ["bfloat16", "float16"], "w": ["bfloat16", "float32"]},
        "contracts": ["default", "zero_centered_gamma"],
        "include_dirs": ["include"],
        "modules": modules,
        "routes": {
            "sm_90a": {"fwd": fwd_90, "fwd_residual": fwd_90, "bwd": ["toy_bwd"],
                       "bwd_residual": ["toy_bwd"]},
            "sm_100a": {"fwd": fwd_100, "fwd_residual": fwd_100, "bwd": ["toy_bwd"],
                        "bwd_residual": ["toy_bwd"], "bwd_nondet": ["toy_bwd_nondet"]},
        },
    }
    if mutate is not None:
        mutate(doc)
    path = root / "build.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path
