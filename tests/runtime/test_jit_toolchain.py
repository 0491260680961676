"""nvcc discovery (CUDA_HOME first, then PATH), version, targets, runtime library, tvm-ffi."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from jit_support import needs_nvcc

from miles_ext_kernels.cake.jit import toolchain as tc


def _wrapper_nvcc(home: Path, real: Path) -> Path:
    """A CUDA_HOME whose bin/nvcc forwards to the real nvcc."""
    nvcc = home / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR)
    return nvcc


def test_missing_nvcc_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(tc.ToolchainError, match="nvcc was not found.*CUDA_HOME"):
        tc.find_nvcc()


@needs_nvcc
def test_cuda_home_wins_over_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = tc.find_nvcc()
    wrapper = _wrapper_nvcc(tmp_path / "cuda", real)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert tc.find_nvcc() == wrapper
    monkeypatch.delenv("CUDA_HOME")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", f"{real.parent}{os.pathsep}{os.environ['PATH']}")
    assert tc.find_nvcc() == real


@needs_nvcc
def test_probe_reads_version_targets_and_cudart() -> None:
    found = tc.probe_toolchain()
    assert found is tc.probe_toolchain()  # probed once, cached
    major, minor, *_ = (int(p) for p in found.version.split("."))
    assert f"{major}.{minor}" == found.release
    assert "sm_80" in found.gpu_codes and "compute_80" in found.gpu_archs
    assert any(found.cudart_dir.glob("libcudart.so*"))
    assert found.can_target("sm_80") and not found.can_target("sm_80a")
    if major >= 13 or (major, minor) >= (12, 8):
        assert found.can_target("sm_100a") and found.can_target("sm_103a")
        assert found.can_target("sm_90a")


@needs_nvcc
def test_unbuildable_arch_names_the_arch_and_the_nvcc_version() -> None:
    found = tc.probe_toolchain()
    if found.can_target("sm_107a"):
        pytest.skip(f"nvcc {found.version} targets sm_107a")
    with pytest.raises(tc.ToolchainError) as info:
        found.require_arch("sm_107a")
    assert "sm_107a" in str(info.value) and found.version in str(info.value)
    with pytest.raises(tc.ToolchainError, match="not a CUDA architecture"):
        found.require_arch("hopper")


def test_tvm_ffi_include_holds_tvm_ffi_and_dlpack_headers() -> None:
    include = tc.tvm_ffi_include_dir()
    assert (include / "tvm" / "ffi" / "function.h").is_file()
    assert (include / "dlpack" / "dlpack.h").is_file()
    import tvm_ffi

    assert tc.tvm_ffi_version() == tvm_ffi.__version__
