"""``python -m miles_ext_kernels.cake``: build, verify and info."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jit_support import FWD_MODULE, needs_nvcc, private_vendor_dir

import miles_ext_kernels
from miles_ext_kernels.cake import cli
from miles_ext_kernels.cake.jit.cache import CACHE_ENV
from miles_ext_kernels.cake.manifest import MANIFEST_NAME, VENDOR_DIR_ENV, load_manifest


@pytest.fixture
def vendor(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A private vendored rmsnorm op, selected through the vendor-dir environment variable."""
    path = private_vendor_dir(request, tmp_path / "vendor")
    monkeypatch.setenv(VENDOR_DIR_ENV, str(path))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return path


def _invoke(*args: str):
    return CliRunner().invoke(cli.cli, list(args))


def test_verify_clean_exits_zero(vendor: Path) -> None:
    count = len(load_manifest(vendor).files())
    result = _invoke("verify")
    assert result.exit_code == 0, result.output
    assert f"clean: {count} vendored file(s)" in result.output
    report = json.loads(_invoke("verify", "--json").output)
    assert report["clean"] is True and report["checked"] == count
    assert report["vendor_dir"] == str(vendor)


@pytest.mark.parametrize("drift", ["modified", "missing", "extra"])
def test_verify_drift_exits_one_and_names_the_file(vendor: Path, drift: str) -> None:
    rel = "csrc/tvm_ffi_utils.h"
    if drift == "modified":
        (vendor / rel).write_bytes((vendor / rel).read_bytes() + b" ")
    elif drift == "missing":
        (vendor / rel).unlink()
    else:
        rel = "csrc/cake_rmsnorm_train/stray.cu"
        (vendor / rel).write_text("// not vendored\n")
    result = _invoke("verify")
    assert result.exit_code == 1
    assert f"{drift}: {rel}" in result.output
    report = json.loads(_invoke("verify", "--json").output)
    assert report["clean"] is False and report[drift] == [rel]


def test_verify_without_or_with_a_broken_manifest_exits_two(vendor: Path) -> None:
    manifest = vendor / MANIFEST_NAME
    manifest.write_text("{ broken")
    broken = _invoke("verify")
    assert broken.exit_code == 2 and MANIFEST_NAME in broken.output
    assert "error" in json.loads(_invoke("verify", "--json").output)
    manifest.unlink()
    missing = _invoke("verify")
    assert missing.exit_code == 2 and "nothing is vendored" in missing.output


def test_info_reports_versions_ops_packages_and_arches(vendor: Path) -> None:
    from miles_ext_kernels.cake.jit.toolchain import ToolchainError, probe_toolchain

    result = _invoke("info", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["version"] == miles_ext_kernels.__version__
    op = info["vendored"]["ops"]["rmsnorm"]
    commit = load_manifest(vendor).ops["rmsnorm"].commit
    assert len(commit) == 40 and op["commit"] == commit
    assert op["files"] == len(load_manifest(vendor).ops["rmsnorm"].files())
    vendored = [p for p in info["packages"] if p["origin"] == "vendored"]
    assert [p["op"] for p in vendored] == ["rmsnorm"]
    assert set(vendored[0]["arches"]) >= {"sm_100a", "sm_103a"}
    assert set(info["first_party"]) == {p["name"] for p in info["packages"]
                                        if p["origin"] == "first_party"}
    import tvm_ffi

    assert info["tvm_ffi"]["version"] == tvm_ffi.__version__
    try:
        toolchain = probe_toolchain()
    except ToolchainError:
        assert "error" in info["nvcc"]
        return
    assert info["nvcc"]["version"] == toolchain.version
    for arch in ("sm_100a", "sm_107a"):
        expected = "buildable" if toolchain.can_target(arch) else "not buildable"
        assert info["arches"][arch].startswith(expected)
    text = _invoke("info").output
    assert miles_ext_kernels.__version__ in text and commit in text


def _unloadable_op(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vendored op of layout ``custom`` whose (intact) files no adapter takes."""
    from package_trees import write_manifest

    vendor = write_manifest(tmp_path / "custom", {"csrc/x": {"csrc/x/k.cu": b"//\n"}},
                            layout="custom")
    monkeypatch.setenv(VENDOR_DIR_ENV, str(vendor))
    return vendor


def test_info_lists_first_party_packages_past_a_broken_manifest(vendor: Path) -> None:
    (vendor / MANIFEST_NAME).write_bytes(b"")
    result = _invoke("info", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert MANIFEST_NAME in info["vendored"]["error"] and "packages_error" not in info
    assert info["first_party"] and all(p["origin"] == "first_party" for p in info["packages"])


def test_info_shows_an_unloadable_op_and_verify_fails_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unloadable_op(tmp_path, monkeypatch)
    info = json.loads(_invoke("info", "--json").output)
    assert "look like 'unknown'" in info["vendored"]["ops"]["rmsnorm"]["error"]
    assert info["first_party"] and all(p["origin"] == "first_party" for p in info["packages"])
    text = _invoke("info").output
    assert "NOT LOADED: cannot load vendored op 'rmsnorm'" in text
    verify = _invoke("verify")
    assert verify.exit_code == 2
    assert "clean: 1 vendored file(s)" in verify.output
    assert "error: cannot load vendored op 'rmsnorm'" in verify.output
    report = json.loads(_invoke("verify", "--json").output)
    assert report["clean"] is True and len(report["unloadable"]) == 1


def test_build_with_a_bad_jobs_variable_names_it(
    vendor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILES_EXT_KERNELS_JOBS", "abc")
    result = _invoke("build", "--arch", "sm_90a")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert "MILES_EXT_KERNELS_JOBS='abc' is not an integer" in result.output


@needs_nvcc
def test_build_goes_on_past_an_unloadable_vendored_op(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unloadable_op(tmp_path, monkeypatch)
    result = _invoke("build", "--arch", "sm_90a", "--package", "no_such_package")
    assert result.exit_code == 2
    assert "warning: skipping: cannot load vendored op 'rmsnorm'" in result.output
    assert "no module to build" in result.output and "miles_rmsnorm" in result.output


def test_plan_builds_builds_shared_cache_names_once(vendor: Path) -> None:
    from jit_support import vendored_package

    package = vendored_package(vendor)
    planned = cli.plan_builds([package], "sm_100a")
    names = [job.cache_name for job in planned]
    assert len(names) == len(set(names))
    assert set(names) == {r.cache_names["sm_100a"] for r in package.modules.values()
                          if "sm_100a" in r.arches}
    assert len(names) < sum("sm_100a" in r.arches for r in package.modules.values())
    only = cli.plan_builds([package], "sm_100a", modules=[FWD_MODULE])
    assert [job.record.name for job in only] == [FWD_MODULE]
    assert cli.plan_builds([package], "sm_100a", op="other") == []


@needs_nvcc
def test_build_of_an_arch_nvcc_cannot_target_names_arch_and_version(vendor: Path) -> None:
    from miles_ext_kernels.cake.jit.toolchain import probe_toolchain

    toolchain = probe_toolchain()
    if toolchain.can_target("sm_107a"):
        pytest.skip(f"nvcc {toolchain.version} targets sm_107a")
    result = _invoke("build", "--arch", "sm_107a")
    assert result.exit_code == 2
    assert "sm_107a" in result.output and toolchain.version in result.output


@needs_nvcc
def test_build_with_nothing_to_build_lists_the_packages(vendor: Path) -> None:
    result = _invoke("build", "--arch", "sm_100a", "--package", "no_such_package")
    assert result.exit_code == 2
    assert "no module to build" in result.output
    assert "flashinfer_cake_rmsnorm_train" in result.output


@needs_nvcc
def test_build_one_module_then_cached_and_failures_exit_one(vendor: Path) -> None:
    first = _invoke("build", "--arch", "sm_100a", "--module", FWD_MODULE, "--jobs", "2")
    assert first.exit_code == 0, first.output
    assert "built" in first.output and f"{FWD_MODULE}_sm_100a" in first.output
    assert "1 ok, 0 failed" in first.output
    again = _invoke("build", "--arch", "sm_100a", "--module", FWD_MODULE)
    assert again.exit_code == 0 and "cached" in again.output

    other = "cake_rmsnorm_train_39325dca02d9cc2ad87d"
    source = next((vendor / "csrc" / "cake_rmsnorm_train").glob(f"{other}_kernel.cu"))
    source.write_bytes(source.read_bytes() + b"// edited\n")
    failed = _invoke("build", "--arch", "sm_100a", "--module", other, "--module", FWD_MODULE)
    assert failed.exit_code == 1
    assert "1 ok, 1 failed" in failed.output
    assert "FAIL" in failed.output and "IntegrityError" in failed.output
    assert source.name in failed.output


def test_module_entry_point_and_console_script_main() -> None:
    out = subprocess.run([sys.executable, "-m", "miles_ext_kernels.cake", "--help"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0
    assert all(cmd in out.stdout for cmd in ("build", "verify", "info"))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
