"""Package adapters (upstream table-0.7 layout, first-party build.json), discovery, records."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch
from package_trees import (
    UPSTREAM_TABLE,
    vendor_table_layout,
    write_build_json_package,
    write_manifest,
)

from miles_ext_kernels.cake import dispatch, routing
from miles_ext_kernels.cake.manifest import MANIFEST_NAME, VENDOR_DIR_ENV
from miles_ext_kernels.cake.ops.rmsnorm import rmsnorm_forward
from miles_ext_kernels.cake.packages import (
    SUPPORTED_LAYOUTS,
    BuildJsonPackage,
    CallSpec,
    ModuleRecord,
    RecordError,
    UnsupportedLayoutError,
    UnsupportedRouteError,
    UpstreamTablePackage,
    VendoredPackageError,
    clear_discovery_cache,
    discover,
    discover_packages,
)
from miles_ext_kernels.cake.packages.discovery import FIRST_PARTY_ROOT

H512_BWD = "cake_rmsnorm_train_01036297dc6e647b9e56"


@pytest.fixture(autouse=True)
def _fresh_discovery():
    clear_discovery_cache()
    yield
    clear_discovery_cache()


@pytest.fixture(scope="session")
def table_vendor(vendored_rmsnorm) -> Path:
    """The rmsnorm op vendored by the tool from the wheel's checkout (read-only)."""
    return vendored_rmsnorm


@pytest.fixture()
def own_vendor(vendored_rmsnorm_copy) -> Path:
    """A private copy of the vendored tree this test may modify."""
    return vendored_rmsnorm_copy


@pytest.fixture(scope="session")
def upstream_pkg(table_vendor) -> UpstreamTablePackage:
    clear_discovery_cache()
    (package,) = discover_packages(table_vendor, include_first_party=False)
    return package


# ---------------------------------------------------------------- upstream table adapter


def test_upstream_package_shape(upstream_pkg, table_vendor):
    pkg = upstream_pkg
    assert (pkg.layout, pkg.origin, pkg.op) == ("table-0.7", "vendored", "rmsnorm")
    assert pkg.name == "flashinfer_cake_rmsnorm_train"
    assert pkg.source_root == table_vendor
    assert pkg.include_dirs == (table_vendor / "csrc", table_vendor / "include")
    assert len(pkg.modules) == 31
    assert pkg.arches() == ("sm_100a", "sm_103a", "sm_107a")
    assert pkg.arch_for_capability((10, 3)) == "sm_103a"
    assert pkg.arch_for_capability("10.7") == "sm_107a"
    assert pkg.arch_for_capability((9, 0)) is None
    assert pkg.arch_for_capability("garbage") is None
    assert "csrc/tvm_ffi_utils.h" in pkg.vendored_files
    assert "include/flashinfer/layout.cuh" in pkg.vendored_files
    assert "jit/cake_rmsnorm_train.py" in pkg.vendored_files
    assert "cake_rmsnorm_train.py" not in pkg.vendored_files  # the facade is not built
    for record in pkg.modules.values():
        for rel in record.sources:
            assert pkg.source_path(rel).is_file()
            assert (table_vendor / rel) == pkg.source_path(rel)


def test_upstream_package_never_imports_the_table(upstream_pkg):
    assert not any(name == "flashinfer" or name.startswith("flashinfer.") for name in sys.modules)
    assert "cake_rmsnorm_train" not in sys.modules


def test_records_are_frozen(upstream_pkg):
    record = upstream_pkg.modules[H512_BWD]
    with pytest.raises(AttributeError):
        record.hidden = 1024
    with pytest.raises(TypeError):
        record.grid_rule["ctas_per_sm"] = 8
    with pytest.raises(TypeError):
        upstream_pkg.modules["x"] = record
    assert record.arg_plan[0] == ("buffer", "g")
    assert record.as_dict()["grid_rule"]["ctas_per_sm"] == 2
    assert {record} == {upstream_pkg.modules[H512_BWD]}


def test_upstream_select_modules(upstream_pkg):
    pkg = upstream_pkg
    small = pkg.select_modules("sm_100a", 512, "fwd", False, 1)
    assert [r.name for r in small] == ["cake_rmsnorm_train_1af0069a0ec96fb8b742"]
    assert all(isinstance(r, ModuleRecord) for r in small)
    (bwd,) = pkg.select_modules("sm_100a", 512, "bwd", False, 10)
    assert bwd.name == H512_BWD
    assert pkg.workspace_module("sm_100a", 512, "bwd", False) is bwd
    assert pkg.workspace_module("sm_100a", 512, "fwd", False) is None
    for rows in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="rows must be a positive int"):
            pkg.select_modules("sm_100a", 512, "fwd", False, rows)


@pytest.mark.parametrize(("arch", "hidden", "kind", "residual", "expect"), [
    ("sm_90a", 512, "fwd", False, ["sm_100a, sm_103a, sm_107a"]),
    ("sm_100a", 4096, "fwd", False, ["512, 2048, 6144", "fwd_residual", "bwd_residual"]),
    ("sm_100a", 512, "fwd", True, ["512, 2048, 6144", "fwd_residual"]),
    ("sm_107a", 512, "bwd_nondet", False, ["on sm_107a", "bwd, bwd_residual"]),
])
def test_upstream_unsupported_route_lists_support(upstream_pkg, arch, hidden, kind, residual,
                                                  expect):
    with pytest.raises(UnsupportedRouteError) as info:
        upstream_pkg.route_modules(arch, hidden, kind, residual)
    message = str(info.value)
    assert "flashinfer_cake_rmsnorm_train" in message and "table-0.7" in message
    for fragment in expect:
        assert fragment in message


@pytest.mark.parametrize(("call", "problem"), [
    (CallSpec("rmsnorm", "fwd", 2048), None),
    (CallSpec("rmsnorm", "bwd", 6144, residual=True), None),
    (CallSpec("rmsnorm", "fwd", 512, residual=True), "no route"),
    (CallSpec("rmsnorm", "fwd", 2048, x_dtype="float16"), "only bfloat16 x and w"),
    (CallSpec("rmsnorm", "fwd", 2048, w_dtype="float32"), "only bfloat16 x and w"),
    (CallSpec("rmsnorm", "fwd", 2048, zero_centered_gamma=True), "default rounding contract"),
    (CallSpec("rmsnorm", "fwd", 2048, cast_before_weight_mul=True), "default rounding contract"),
    (CallSpec("rmsnorm", "bwd_nondet", 2048), "kind 'bwd_nondet' is not served"),
    (CallSpec("rmsnorm", "fwd", 4096), "hidden 4096 is not served"),
    (CallSpec("layernorm", "fwd", 2048), "implements op 'rmsnorm'"),
])
def test_upstream_supports(upstream_pkg, call, problem):
    reason = upstream_pkg.supports(call)
    if problem is None:
        assert reason is None
        assert upstream_pkg.supports(call, arch="sm_103a") is None
    else:
        assert reason is not None and problem in reason


def test_upstream_supports_per_arch(upstream_pkg):
    call = CallSpec("rmsnorm", "fwd", 2048)
    assert upstream_pkg.supports(call, arch="sm_100a") is None
    assert "sm_100a, sm_103a, sm_107a" in upstream_pkg.supports(call, arch="sm_90a")


def _rewrite_table(vendor: Path, edit) -> None:
    table = vendor / "jit" / "cake_rmsnorm_train.py"
    table.write_text(edit(table.read_text()))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s: s.replace("HIDDEN_SIZES: tuple[int, ...] = (512, 2048, 6144)",
                         "HIDDEN_SIZES = tuple(range(3))"), "HIDDEN_SIZES (line"),
    (lambda s: s.replace("ROUTES: dict[str, dict[str, list[str]]] = {", "_ROUTES = {"),
     "no module-level literal ['ROUTES']"),
    (lambda s: s[:s.index("ROUTES:")] + s[s.index("ROUTES:"):].replace(
        '"cake_rmsnorm_train_209e86d94c24fbe2ad17",', '"nope",', 1),
     "names unknown module 'nope'"),
    (lambda s: s.replace('"ffi_entry": "run",', '"ffi_entry": 7,', 1),
     "key 'ffi_entry'"),
    (lambda s: s.replace('"kind": "rows_per_cta",', '"kind": "rows_per_warp",', 1),
     "key 'grid_rule': kind 'rows_per_warp'"),
    (lambda s: s.replace('"at_most": 1024,', '"at_most": -5,', 1), "key 'select_rule'"),
    (lambda s: s.replace('"counters": 16,', '"counters": "16",', 1), "key 'workspace_rule'"),
    (lambda s: s.replace('("buffer", "g"),', '("tensor", "g"),', 1), "key 'arg_plan'"),
    (lambda s: s.replace('"hidden": 512,', '"hidden": 4096,', 1), "hidden 4096"),
    (lambda s: s.replace("def route_key(", "def route_key(:", 1), "cannot parse"),
])
def test_upstream_table_errors_are_clear(own_vendor, edit, message):
    _rewrite_table(own_vendor, edit)
    with pytest.raises(UnsupportedLayoutError) as info:
        UpstreamTablePackage(own_vendor, "rmsnorm",
                             discover_files(own_vendor))
    assert message in str(info.value)


def test_upstream_record_error_names_package_module_and_key(own_vendor):
    _rewrite_table(own_vendor, lambda s: s.replace('"ffi_entry": "run",', '"ffi_entry": 7,', 1))
    with pytest.raises(UnsupportedLayoutError) as info:
        discover_packages(own_vendor, include_first_party=False)
    text = str(info.value)
    assert "'flashinfer_cake_rmsnorm_train'" in text
    assert "module 'cake_rmsnorm_train_01036297dc6e647b9e56'" in text and "'ffi_entry'" in text


def discover_files(vendor: Path):
    from miles_ext_kernels.cake.manifest import load_manifest

    return load_manifest(vendor).ops["rmsnorm"].files()


def test_unvendored_source_is_refused(fi_files, tmp_path):
    files = {p: d for p, d in fi_files.items()
             if not p.endswith("01036297dc6e647b9e56_kernel.cu")}
    vendor = vendor_table_layout(files, tmp_path / "_vendor")
    with pytest.raises(UnsupportedLayoutError, match="is not vendored"):
        discover_packages(vendor, include_first_party=False)


# ---------------------------------------------------------------- discovery


def test_discovery_without_manifest_is_empty(tmp_path):
    assert discover_packages(tmp_path, include_first_party=False) == []


def test_discovery_caches_on_manifest_stat(own_vendor):
    first = discover_packages(own_vendor, include_first_party=False)
    again = discover_packages(own_vendor, include_first_party=False)
    assert first[0] is again[0]
    manifest = own_vendor / MANIFEST_NAME
    stat = manifest.stat()
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    fresh = discover_packages(own_vendor, include_first_party=False)
    assert fresh[0] is not first[0]
    assert fresh[0].modules.keys() == first[0].modules.keys()


def test_discovery_uses_vendor_dir_env(own_vendor, monkeypatch):
    monkeypatch.setenv(VENDOR_DIR_ENV, str(own_vendor))
    (package,) = discover_packages(include_first_party=False)
    assert package.vendor_dir == own_vendor
    monkeypatch.setenv(VENDOR_DIR_ENV, str(own_vendor.parent / "elsewhere"))
    assert discover_packages(include_first_party=False) == []


def test_discovery_refuses_backend_packages(tmp_path):
    files = {}
    for pkg in ("flashinfer/cake_rmsnorm_det_train_backend",
                "flashinfer/cake_rmsnorm_train_backend"):
        files[pkg] = {f"{pkg}/{name}": b"{}\n" if name.endswith(".json") else b"# x\n"
                      for name in ("build.json", "cake_windows.py", "cake_jit.py",
                                   "csrc/kernel.cu")}
    vendor = write_manifest(tmp_path / "_vendor", files, layout="backend-packages")
    with pytest.raises(UnsupportedLayoutError) as info:
        discover_packages(vendor, include_first_party=False)
    text = str(info.value)
    assert "'rmsnorm'" in text and "flashinfer/cake_rmsnorm_train_backend" in text
    assert "'backend-packages'" in text and "table-0.7" in text and "build-json" in text
    # recorded as custom: the files alone identify the layout
    vendor = write_manifest(tmp_path / "_vendor2", files, layout="custom")
    with pytest.raises(UnsupportedLayoutError, match="look like 'backend-packages'"):
        discover_packages(vendor, include_first_party=False)


def test_discovery_refuses_unknown_layouts(fi_files, tmp_path):
    vendor = write_manifest(tmp_path / "a", {"csrc/x": {"csrc/x/k.cu": b"//\n"}}, layout="v9")
    with pytest.raises(UnsupportedLayoutError, match="layout 'v9': no adapter"):
        discover_packages(vendor, include_first_party=False)
    vendor = write_manifest(tmp_path / "b", {"csrc/x": {"csrc/x/k.cu": b"//\n"}})
    with pytest.raises(UnsupportedLayoutError, match="look like 'unknown'"):
        discover_packages(vendor, include_first_party=False)
    assert SUPPORTED_LAYOUTS == ("table-0.7", "build-json")


def test_discovery_accepts_custom_table_layout(fi_files, tmp_path):
    packages = {"flashinfer": {p: d for p, d in fi_files.items() if p != "LICENSE"}}
    vendor = write_manifest(tmp_path / "_vendor", packages, layout="custom")
    (package,) = discover_packages(vendor, include_first_party=False)
    assert package.layout == "table-0.7" and len(package.modules) == 31


def test_discovery_appends_first_party_packages(table_vendor):
    with_fp = discover_packages(table_vendor)
    expected = sorted(FIRST_PARTY_ROOT.glob("*/build.json"))
    assert with_fp[0].origin == "vendored"
    assert [p.build_json for p in with_fp[1:]] == expected
    assert all(p.origin == "first_party" for p in with_fp[1:])


# ---------------------------------------------------------------- broken vendored packages

SM100 = (10, 0)
_UNKNOWN_FILES = {"csrc/x": {"csrc/x/k.cu": b"//\n"}}


def _broken_vendor(tmp_path: Path, how: str) -> Path:
    """A vendor dir the runtime cannot load: an empty (truncated) VENDORED.json, or an op of
    layout ``custom`` (as ``vendor_cake.py fi --package`` writes) whose files no adapter takes."""
    vendor = tmp_path / "_vendor"
    if how == "empty-manifest":
        vendor.mkdir()
        (vendor / MANIFEST_NAME).write_bytes(b"")
        return vendor
    return write_manifest(vendor, _UNKNOWN_FILES, layout="custom")


@pytest.mark.parametrize(("how", "op", "error"), [
    ("empty-manifest", None, "ManifestError"),
    ("custom-layout", "rmsnorm", "UnsupportedLayoutError"),
])
def test_discover_reports_a_broken_vendored_op_and_keeps_first_party(tmp_path, how, op, error):
    vendor = _broken_vendor(tmp_path, how)
    found = discover(vendor)
    (problem,) = found.problems
    assert problem.op == op and type(problem.error).__name__ == error
    assert str(vendor / MANIFEST_NAME) in problem.message
    assert "python tools/vendor_cake.py verify" in problem.message
    assert [p.origin for p in found.packages] == ["first_party"] * len(found.packages)
    skipped = discover_packages(vendor, skip_broken=True)
    assert found.packages and [p.name for p in skipped] == [p.name for p in found.packages]
    with pytest.raises(type(problem.error)):
        discover_packages(vendor)  # the default still raises the error itself


def test_a_discovery_with_problems_is_not_cached(own_vendor):
    manifest = own_vendor / MANIFEST_NAME
    good = manifest.read_bytes()
    manifest.write_bytes(good[: len(good) // 2])
    assert discover(own_vendor, include_first_party=False).problems
    stat = manifest.stat()
    manifest.write_bytes(good)
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime, other size
    found = discover(own_vendor, include_first_party=False)
    assert not found.problems and [p.origin for p in found.packages] == ["vendored"]


@pytest.fixture()
def on_fake_sm100(monkeypatch):
    """The real package discovery on a faked sm_100 device with 148 SMs."""
    def info(device):
        return dispatch.DeviceInfo(device=torch.device(device), capability=SM100, sm_count=148)

    dispatch.clear_caches()
    with dispatch.override(device_info=info):
        yield
    dispatch.clear_caches()


def _decide(**kwargs):
    call = dispatch.make_call("fwd", 2048, torch.bfloat16, torch.bfloat16)
    return dispatch.decide(call, "cpu", rows=64, **kwargs)


@pytest.mark.parametrize("how", ["empty-manifest", "custom-layout"])
def test_dispatch_skips_a_broken_vendored_op_with_one_warning(tmp_path, monkeypatch, caplog,
                                                              on_fake_sm100, how):
    monkeypatch.setenv(VENDOR_DIR_ENV, str(_broken_vendor(tmp_path, how)))
    caplog.set_level(logging.WARNING, logger="miles_ext_kernels")
    assert _decide().backend == "first_party"
    assert _decide(backend="first_party").backend == "first_party"
    assert _decide(backend="reference").backend == "reference"
    assert _decide(backend="reference", strict=True).backend == "reference"
    x = torch.randn(4, 64).to(torch.bfloat16)
    assert dispatch.is_supported("cpu", 2048) and not dispatch.is_supported(
        "cpu", 2048, backend="vendored")
    warnings = [r.message for r in caplog.records if "skipping a vendored package" in r.message]
    assert len(warnings) == 1
    assert str(tmp_path) in warnings[0] and "tools/vendor_cake.py verify" in warnings[0]
    assert "MILES_EXT_KERNELS_STRICT=1" in warnings[0]
    with pytest.raises(VendoredPackageError, match="cannot load") as forced:
        _decide(backend="vendored")
    assert forced.value.manifest == tmp_path / "_vendor" / MANIFEST_NAME
    with pytest.raises(VendoredPackageError, match="tools/vendor_cake.py verify"):
        _decide(strict=True)
    monkeypatch.setenv("MILES_EXT_KERNELS_STRICT", "1")
    with pytest.raises(VendoredPackageError):
        rmsnorm_forward(x, torch.ones(64, dtype=torch.bfloat16))
    assert rmsnorm_forward(x, torch.ones(64, dtype=torch.bfloat16), backend="reference")


def test_a_drifted_vendored_source_still_fails_closed(own_vendor, monkeypatch, on_fake_sm100):
    """Drift is no load problem: the op stays routed and its build refuses the edited file."""
    from miles_ext_kernels.cake.integrity import IntegrityError, verify_module_sources

    monkeypatch.setenv(VENDOR_DIR_ENV, str(own_vendor))
    decision = _decide()
    (record,) = decision.route.modules
    source = own_vendor.joinpath(*record.sources[0].split("/"))
    source.write_bytes(source.read_bytes() + b"// drift\n")
    assert not discover(own_vendor).problems
    assert _decide().backend == "vendored"
    with pytest.raises(IntegrityError, match=source.name):
        verify_module_sources(decision.route.package, record)


# ---------------------------------------------------------------- build.json adapter


@pytest.fixture()
def toy(tmp_path) -> BuildJsonPackage:
    return BuildJsonPackage(write_build_json_package(tmp_path / "toy"))


def test_build_json_package_shape(toy, tmp_path):
    assert (toy.name, toy.op, toy.layout, toy.origin) == (
        "toy_rmsnorm", "rmsnorm", "build-json", "first_party")
    assert toy.source_root == tmp_path / "toy"
    assert toy.include_dirs == (tmp_path / "toy" / "include",)
    assert toy.vendored_files is None
    assert toy.arches() == ("sm_100a", "sm_90a")
    assert toy.arch_for_capability((10, 3)) == "sm_100a"
    assert toy.arch_for_capability((8, 0)) is None
    assert toy.source_path("csrc/bwd_kernel.cu").read_bytes() == b"// bwd kernel\n"
    for bad in ("../x.cu", "/etc/passwd", "a\\b.cu", ""):
        with pytest.raises(ValueError, match="not a clean relative POSIX path"):
            toy.source_path(bad)


def test_build_json_routes_filter_by_hidden_then_rows(toy):
    names = toy.route_modules("sm_100a", 4096, "fwd", True)
    assert names == ("toy_fwd_wide", "toy_fwd_big")
    assert toy.route_modules("sm_100a", 512, "fwd", False) == ("toy_fwd_narrow",)
    assert [r.name for r in toy.select_modules("sm_100a", 4096, "fwd", False, 4096)] == [
        "toy_fwd_wide"]
    assert [r.name for r in toy.select_modules("sm_100a", 4096, "fwd", False, 4097)] == [
        "toy_fwd_big"]
    with pytest.raises(UnsupportedRouteError, match="admits 4097 rows"):
        toy.select_modules("sm_90a", 4096, "fwd", False, 4097)
    with pytest.raises(UnsupportedRouteError) as info:
        toy.route_modules("sm_90a", 512, "bwd_nondet", False)
    assert "64..8192, multiple of 8" in str(info.value)
    assert "bwd, bwd_residual, fwd, fwd_residual" in str(info.value)
    with pytest.raises(UnsupportedRouteError, match="arches sm_100a, sm_90a"):
        toy.route_modules("sm_80", 512, "fwd", False)
    with pytest.raises(UnsupportedRouteError):
        toy.route_modules("sm_100a", 100, "fwd", False)  # not a multiple of 8


def test_build_json_workspace_follows_fixed_chunks(toy):
    owner = toy.workspace_module("sm_90a", 2048, "bwd", False)
    assert owner.name == "toy_bwd"
    assert toy.workspace_module("sm_100a", 2048, "bwd_nondet", False) is None
    layout = routing.workspace_layout(owner, 10_000, sm_count=132, hidden=2048)
    assert (layout["n_chunks"], layout["rows_per_chunk"]) == (256, 40)
    assert layout["partial_bytes"] == 8 * 256 * 2048
    assert routing.workspace_bytes(owner, sm_count=78, hidden=2048) == layout["total_bytes"]
    assert routing.launch_grid(owner, 10_000, sm_count=132) == (256, 1, 1)
    assert routing.launch_grid(owner, 10_000, sm_count=100) == (200, 1, 1)


@pytest.mark.parametrize(("call", "problem"), [
    (CallSpec("rmsnorm", "fwd", 4096, x_dtype="float16", w_dtype="float32"), None),
    (CallSpec("rmsnorm", "bwd", 64, residual=True, zero_centered_gamma=True), None),
    (CallSpec("rmsnorm", "bwd_nondet", 1024), None),
    (CallSpec("rmsnorm", "fwd", 4096, x_dtype="float32"), "x dtype float32"),
    (CallSpec("rmsnorm", "fwd", 4096, w_dtype="float16"), "w dtype float16"),
    (CallSpec("rmsnorm", "fwd", 4096, cast_before_weight_mul=True),
     "['cast_before_weight_mul'] are not served"),
    (CallSpec("rmsnorm", "fwd", 16384), "hidden 16384 is not served"),
    (CallSpec("rmsnorm", "fwd", 1028), "hidden 1028 is not served"),
])
def test_build_json_supports(toy, call, problem):
    reason = toy.supports(call)
    if problem is None:
        assert reason is None
    else:
        assert reason is not None and problem in reason


def test_build_json_supports_per_arch(toy):
    call = CallSpec("rmsnorm", "bwd_nondet", 1024)
    assert toy.supports(call, arch="sm_100a") is None
    assert "no route" in toy.supports(call, arch="sm_90a")


def _drop(key):
    def mutate(doc):
        del doc[key]
    return mutate


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(format="miles-cake-build/2"), "is not 'miles-cake-build/1'"),
    (_drop("routes"), "missing keys ['routes']"),
    (lambda d: d.update(colour="blue"), "unknown keys ['colour']"),
    (lambda d: d["routes"]["sm_90a"].update(fwd=["toy_fwd_big"]),
     "module 'toy_fwd_big' is not built for sm_90a"),
    (lambda d: d["routes"]["sm_90a"].update(fwd=["ghost"]), "unknown module 'ghost'"),
    (lambda d: d["routes"]["sm_90a"].update(bwd_fast=["toy_bwd"]), "routes.sm_90a.bwd_fast"),
    (lambda d: d["routes"].update(sm_80={"fwd": ["toy_bwd"]}), "routes.sm_80"),
    (lambda d: d["modules"]["toy_bwd"].update(colour=1),
     "module 'toy_bwd': unknown keys ['colour']"),
    (lambda d: d["modules"]["toy_bwd"]["source_sha256"].popitem(), "key 'source_sha256'"),
    (lambda d: d["modules"]["toy_bwd"].update(sources=["../up.cu"]), "key 'sources'"),
    (lambda d: d["modules"]["toy_bwd"].update(workspace_rule=None),
     "chunk_bounded needs a fixed_chunks workspace_rule"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(partial_dtype="float16"),
     "partial_dtype"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(sqrt_rows_factor=-1),
     "sqrt_rows_factor must be an int >= 0"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(sqrt_rows_factor=2.5),
     "sqrt_rows_factor must be an int >= 0"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(spread_chunks=-2),
     "spread_chunks must be an int >= 0"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(spread_rows_per_chunk=0),
     "spread_rows_per_chunk must be an int >= 1"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(large_rows=-1),
     "large_rows must be an int >= 0"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(large_rows=4096),
     "large_rows needs large_max_chunks between 1 and max_chunks"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(large_rows=4096,
                                                                 large_max_chunks=0),
     "large_max_chunks must be an int >= 1"),
    (lambda d: d["modules"]["toy_bwd"]["workspace_rule"].update(large_rows=4096,
                                                                 large_max_chunks=10**6),
     "large_rows needs large_max_chunks between 1 and max_chunks"),
    (lambda d: d["modules"]["toy_bwd"].update(workspace_rule={"kind": "borrowed"}),
     "above_rows"),
    (lambda d: d["modules"]["toy_bwd"].update(
        workspace_rule={"kind": "borrowed", "above_rows": -1}), "above_rows must be an int >= 0"),
    (lambda d: d["modules"]["toy_fwd_wide"].update(hidden_rule={"min": 9, "max": 3}),
     "min 9 > max 3"),
    (lambda d: d["modules"]["toy_bwd"].update(
        select_rule={"kind": "rows_outside", "above": 4, "at_most": None}),
     "rows_outside needs an int at_most"),
    (lambda d: d["modules"]["toy_bwd"].update(
        select_rule={"kind": "rows_above", "above": 4, "at_most": None}),
     "kind 'rows_above' is not one of"),
    (lambda d: d["modules"]["toy_fwd_wide"]["logical"].update(x="x-x"),
     "maps to 'x-x', not an identifier"),
    (lambda d: d.update(dtype_pairs=[["float16", "float16"]]), "dtype_pairs entry"),
    (lambda d: d.update(headers=["/abs.h"]), "headers"),
    (lambda d: d.update(alignment_bytes=0), "'alignment_bytes' must be a positive int"),
    (lambda d: d["dtypes"].update(x=["int8"]), "dtypes.x"),
    (lambda d: d.update(contracts=["zero_centered_gamma"]), "'contracts'"),
    (lambda d: d.update(include_dirs=["../include"]), "include_dirs"),
    (lambda d: d["arch_by_capability"].update({"ten": "sm_100a"}), "'ten'"),
])
def test_build_json_errors_are_clear(tmp_path, mutate, message):
    path = write_build_json_package(tmp_path / "bad", mutate=mutate)
    with pytest.raises(UnsupportedLayoutError) as info:
        BuildJsonPackage(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_build_json_not_json(tmp_path):
    path = tmp_path / "build.json"
    path.write_text("{not json")
    with pytest.raises(UnsupportedLayoutError, match="cannot read"):
        BuildJsonPackage(path)


REAL_BUILD_JSON = FIRST_PARTY_ROOT / "rmsnorm" / "build.json"


@pytest.mark.skipif(not REAL_BUILD_JSON.is_file(),
                    reason="miles_ext_kernels/kernels/rmsnorm/build.json not written yet")
def test_first_party_rmsnorm_build_json_is_consistent():
    from miles_ext_kernels.cake.integrity import verify_module_sources

    package = BuildJsonPackage(REAL_BUILD_JSON)
    assert package.op == "rmsnorm" and package.origin == "first_party"
    doc = json.loads(REAL_BUILD_JSON.read_text())
    for arch, routes in doc["routes"].items():
        assert arch in package.arches()
        for key, names in routes.items():
            for name in names:
                assert name in package.modules, (arch, key, name)
    for record in package.modules.values():
        paths = verify_module_sources(package, record)
        assert [p.name for p in paths] == [Path(s).name for s in record.sources]
        for directory in package.include_dirs:
            assert directory.is_dir(), directory


# ---------------------------------------------------------------- records and calls


def test_call_spec_validation():
    call = CallSpec("rmsnorm", "bwd", 4096, residual=True)
    assert call.contracts == ("default",)
    assert CallSpec("rmsnorm", "fwd", 8, zero_centered_gamma=True,
                    cast_before_weight_mul=True).contracts == (
        "cast_before_weight_mul", "zero_centered_gamma")
    for kwargs, message in [
        ({"kind": "back"}, "CallSpec.kind"),
        ({"hidden": 0}, "CallSpec.hidden"),
        ({"hidden": True}, "CallSpec.hidden"),
        ({"x_dtype": "bf16"}, "CallSpec.x_dtype"),
        ({"w_dtype": "float64"}, "CallSpec.w_dtype"),
        ({"residual": 1}, "CallSpec.residual"),
        ({"op": ""}, "CallSpec.op"),
    ]:
        args = {"op": "rmsnorm", "kind": "fwd", "hidden": 512} | kwargs
        with pytest.raises(RecordError, match=message):
            CallSpec(**args)


def test_module_record_missing_keys_named(upstream_pkg):
    raw = upstream_pkg.modules[H512_BWD].as_dict()
    del raw["launch"]
    with pytest.raises(RecordError, match=r"package 'p': module 'm': missing keys \['launch'\]"):
        ModuleRecord.from_mapping("p", "m", raw)


def test_module_record_round_trip(upstream_pkg, fi_files):
    record = upstream_pkg.modules[H512_BWD]
    again = ModuleRecord.from_mapping(upstream_pkg.name, record.name, record.as_dict())
    assert again == record
    assert UPSTREAM_TABLE in fi_files


def test_copied_vendor_dir_is_independent(table_vendor, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(table_vendor, copy)
    (package,) = discover_packages(copy, include_first_party=False)
    assert package.source_root == copy


def test_build_json_dtype_pairs_and_constraints(tmp_path):
    def mutate(doc):
        doc.update(dtype_pairs=[["bfloat16", "bfloat16"], ["float16", "float32"]],
                   alignment_bytes=16, row_stride_multiple=8, headers=["include/toy.h"])
    package = BuildJsonPackage(write_build_json_package(tmp_path / "p", mutate=mutate))
    assert package.supports(CallSpec("rmsnorm", "fwd", 512, x_dtype="float16",
                                     w_dtype="float32")) is None
    reason = package.supports(CallSpec("rmsnorm", "fwd", 512, w_dtype="float32"))
    assert "dtype pair x=bfloat16 w=float32 is not served" in reason
    assert (package.alignment_bytes, package.row_stride_multiple) == (16, 8)
    assert package.headers == ("include/toy.h",)
