"""Integrity checks before a build: source sha256, VENDORED.json blob ids, missing files, links."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from package_trees import write_build_json_package

from miles_ext_kernels.cake import integrity
from miles_ext_kernels.cake.integrity import IntegrityError, verify_module_sources
from miles_ext_kernels.cake.manifest import git_blob_id, load_manifest
from miles_ext_kernels.cake.packages import (
    BuildJsonPackage,
    clear_discovery_cache,
    discover_packages,
)

FWD = "cake_rmsnorm_train_1af0069a0ec96fb8b742"
FWD_KERNEL = f"csrc/cake_rmsnorm_train/{FWD}_kernel.cu"


@pytest.fixture()
def vendor(vendored_rmsnorm_copy) -> Path:
    """A private copy of the tool-vendored rmsnorm op."""
    integrity.clear_digest_cache()
    return vendored_rmsnorm_copy


def _package(vendor: Path):
    clear_discovery_cache()
    (package,) = discover_packages(vendor, include_first_party=False)
    return package


def _touch_later(path: Path) -> None:
    """Move the mtime forward so a memoised digest cannot hide an edit."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_clean_tree_verifies(vendor):
    package = _package(vendor)
    record = package.modules[FWD]
    paths = verify_module_sources(package, record)
    assert paths == [vendor / rel for rel in record.sources]
    for record in package.modules.values():
        assert len(verify_module_sources(package, record)) == 2


def test_modified_source_names_file_and_digests(vendor):
    package = _package(vendor)
    record = package.modules[FWD]
    verify_module_sources(package, record)  # memoised clean digests first
    path = vendor / FWD_KERNEL
    data = path.read_bytes() + b"// edited\n"
    path.write_bytes(data)
    _touch_later(path)
    with pytest.raises(IntegrityError) as info:
        verify_module_sources(package, record)
    error = info.value
    found = hashlib.sha256(data).hexdigest()
    assert error.path == path and error.found == found
    assert error.expected == record.source_sha256[FWD_KERNEL]
    assert str(path) in str(error) and found in str(error) and error.expected in str(error)


def test_modified_header_is_caught_by_blob_id(vendor):
    package = _package(vendor)
    header = vendor / "include" / "flashinfer" / "layout.cuh"
    expected = load_manifest(vendor).ops["rmsnorm"].files()["include/flashinfer/layout.cuh"].blob
    data = header.read_bytes() + b"\n// appended\n"
    header.write_bytes(data)
    with pytest.raises(IntegrityError) as info:
        verify_module_sources(package, package.modules[FWD])
    assert info.value.path == header
    assert info.value.expected == expected
    assert info.value.found == git_blob_id(data)
    assert "VENDORED.json" in str(info.value)


def test_table_and_source_edited_together_is_caught(vendor):
    """A source edited together with its digest in the table still fails: blob ids differ."""
    path = vendor / FWD_KERNEL
    old = path.read_bytes()
    new = old + b"// patched\n"
    path.write_bytes(new)
    table = vendor / "jit" / "cake_rmsnorm_train.py"
    text = table.read_text().replace(hashlib.sha256(old).hexdigest(),
                                     hashlib.sha256(new).hexdigest())
    table.write_text(text)
    package = _package(vendor)
    with pytest.raises(IntegrityError) as info:
        verify_module_sources(package, package.modules[FWD])
    assert info.value.path in (path, table)
    assert "git blob id" in str(info.value)


def test_missing_source(vendor):
    package = _package(vendor)
    (vendor / FWD_KERNEL).unlink()
    with pytest.raises(IntegrityError, match=r"is missing") as info:
        verify_module_sources(package, package.modules[FWD])
    assert info.value.path == vendor / FWD_KERNEL


def test_symlinked_source_is_refused_even_with_identical_bytes(vendor, tmp_path):
    package = _package(vendor)
    path = vendor / FWD_KERNEL
    outside = tmp_path / "copy.cu"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(IntegrityError, match="symlink where a regular file is expected"):
        verify_module_sources(package, package.modules[FWD])


def test_symlinked_vendored_header_is_refused(vendor, tmp_path):
    package = _package(vendor)
    header = vendor / "csrc" / "tvm_ffi_utils.h"
    outside = tmp_path / "tvm_ffi_utils.h"
    outside.write_bytes(header.read_bytes())
    header.unlink()
    header.symlink_to(outside)
    with pytest.raises(IntegrityError, match="symlink"):
        verify_module_sources(package, package.modules[FWD])


def test_foreign_record_is_refused(vendor, tmp_path):
    package = _package(vendor)
    other = BuildJsonPackage(write_build_json_package(tmp_path / "toy"))
    with pytest.raises(ValueError, match="is not a module of package"):
        verify_module_sources(package, other.modules["toy_bwd"])


def test_digests_are_memoised_per_stat(vendor, monkeypatch):
    package = _package(vendor)
    record = package.modules[FWD]
    verify_module_sources(package, record)
    reads: list[Path] = []
    original = Path.read_bytes

    def counting(self):
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    verify_module_sources(package, record)
    assert reads == []
    _touch_later(vendor / FWD_KERNEL)
    verify_module_sources(package, record)
    assert reads == [vendor / FWD_KERNEL]


def test_first_party_sources_and_headers(tmp_path):
    def add_header_digest(doc):
        doc["modules"]["toy_bwd"]["source_sha256"]["include/toy.h"] = hashlib.sha256(
            b"#pragma once\n").hexdigest()
    package = BuildJsonPackage(write_build_json_package(tmp_path / "toy",
                                                        mutate=add_header_digest))
    record = package.modules["toy_bwd"]
    assert verify_module_sources(package, record) == [
        tmp_path / "toy" / "csrc" / "bwd_kernel.cu", tmp_path / "toy" / "csrc" / "bwd_binding.cu"]
    header = tmp_path / "toy" / "include" / "toy.h"
    header.write_text("#pragma once\n#define EDITED 1\n")
    _touch_later(header)
    with pytest.raises(IntegrityError) as info:
        verify_module_sources(package, record)
    assert info.value.path == header and "header of module toy_bwd" in str(info.value)
    kernel = tmp_path / "toy" / "csrc" / "bwd_kernel.cu"
    kernel.write_bytes(b"// other\n")
    with pytest.raises(IntegrityError, match="bwd_kernel.cu does not match its recorded sha256"):
        verify_module_sources(package, record)


def test_symlinked_directory_escaping_the_vendor_dir_is_refused(vendor, tmp_path):
    package = _package(vendor)
    directory = vendor / "csrc" / "cake_rmsnorm_train"
    outside = tmp_path / "elsewhere"
    directory.rename(outside)
    directory.symlink_to(outside, target_is_directory=True)
    with pytest.raises(IntegrityError, match="resolves outside"):
        verify_module_sources(package, package.modules[FWD])


def test_build_inputs_are_own_sources_headers_and_table(vendor):
    package = _package(vendor)
    inputs = integrity.vendored_build_inputs(package, package.modules[FWD])
    assert inputs == sorted([
        FWD_KERNEL, FWD_KERNEL.replace("_kernel.cu", "_binding.cu"), "csrc/tvm_ffi_utils.h",
        "include/flashinfer/layout.cuh", "jit/cake_rmsnorm_train.py"])


def test_other_modules_edit_fails_only_that_module(vendor):
    package = _package(vendor)
    other = package.modules["cake_rmsnorm_train_39325dca02d9cc2ad87d"]
    path = package.source_path(other.sources[0])
    path.write_bytes(path.read_bytes() + b"// edited\n")
    assert len(verify_module_sources(package, package.modules[FWD])) == 2
    with pytest.raises(IntegrityError) as info:
        verify_module_sources(package, other)
    assert info.value.path == path
