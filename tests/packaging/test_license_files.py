"""setup.py's license hook: which license files the distribution lists, and when it refuses."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR_REL = "miles_ext_kernels/cake/_vendor"


def load_setup_module() -> ModuleType:
    """Import setup.py as a module (its ``setup()`` call only runs as ``__main__``)."""
    spec = importlib.util.spec_from_file_location("miles_setup_hook", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = load_setup_module()


def make_root(tmp_path: Path, license_expr: str = "Apache-2.0", ops: dict | None = None,
              vendored: dict[str, bytes] | None = None) -> Path:
    """A fake project root: pyproject, our LICENSE/NOTICE, optionally a vendor dir."""
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\nlicense = "{license_expr}"\n', encoding="utf-8")
    (tmp_path / "LICENSE").write_text("ours\n", encoding="utf-8")
    (tmp_path / "NOTICE").write_text("ours\n", encoding="utf-8")
    vendor = tmp_path / VENDOR_REL
    for rel, data in (vendored or {}).items():
        (vendor / rel).parent.mkdir(parents=True, exist_ok=True)
        (vendor / rel).write_bytes(data)
    if ops is not None:
        vendor.mkdir(parents=True, exist_ok=True)
        manifest = {"schema": 1, "ops": ops}
        (vendor / "VENDORED.json").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path


def op_with_license(spdx: str, files: list[str]) -> dict:
    """A VENDORED.json op entry with only the fields the hook reads."""
    return {"license": {"spdx": spdx, "files": files}, "packages": []}


def test_clean_checkout_lists_only_our_license_files(tmp_path: Path):
    root = make_root(tmp_path)
    assert hook.license_files(root) == ["LICENSE", "NOTICE"]


def test_recorded_and_found_vendored_licenses_are_listed_once(tmp_path: Path):
    root = make_root(
        tmp_path,
        ops={"rmsnorm": op_with_license("Apache-2.0", ["LICENSE"])},
        vendored={"LICENSE": b"upstream\n", "csrc/third/NOTICE.txt": b"n\n",
                  "csrc/license.py": b"# not a license file\n"},
    )
    assert hook.license_files(root) == [
        "LICENSE", "NOTICE", f"{VENDOR_REL}/LICENSE", f"{VENDOR_REL}/csrc/third/NOTICE.txt"]


def test_missing_recorded_license_file_is_an_error_naming_it(tmp_path: Path):
    root = make_root(tmp_path, ops={"rmsnorm": op_with_license("Apache-2.0", ["LICENSE"])})
    with pytest.raises(hook.LicenseConfigError, match=r"'LICENSE' for op 'rmsnorm'"):
        hook.license_files(root)


def test_vendored_license_outside_project_license_is_refused(tmp_path: Path):
    root = make_root(tmp_path, ops={"rmsnorm": op_with_license("MIT", ["LICENSE"])},
                     vendored={"LICENSE": b"mit\n"})
    with pytest.raises(hook.LicenseConfigError, match=r"'Apache-2.0 AND MIT'"):
        hook.license_files(root)


def test_compound_project_license_covers_vendored_ids(tmp_path: Path):
    root = make_root(tmp_path, license_expr="Apache-2.0 AND (MIT OR BSD-3-Clause)",
                     ops={"a": op_with_license("MIT", ["LICENSE"]),
                          "b": op_with_license("NOASSERTION", [])},
                     vendored={"LICENSE": b"mit\n"})
    assert hook.license_files(root)[-1] == f"{VENDOR_REL}/LICENSE"


def test_missing_own_license_is_an_error(tmp_path: Path):
    root = make_root(tmp_path)
    (root / "NOTICE").unlink()
    with pytest.raises(hook.LicenseConfigError, match="NOTICE is missing"):
        hook.license_files(root)


def test_malformed_manifest_is_an_error_naming_the_file(tmp_path: Path):
    root = make_root(tmp_path, vendored={"VENDORED.json": b"{not json"})
    with pytest.raises(hook.LicenseConfigError, match="VENDORED.json"):
        hook.license_files(root)
