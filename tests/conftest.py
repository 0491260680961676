"""Shared fixtures: the real upstream wheel, a throwaway upstream checkout built from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import fi_checkout_from_wheel as fi_fixture

DOWNLOAD_CACHE_ENV = "MILES_EXT_KERNELS_TEST_DOWNLOADS"


def _download_cache() -> Path:
    configured = os.environ.get(DOWNLOAD_CACHE_ENV)
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "miles_ext_kernels" / "test-downloads"


@pytest.fixture(scope="session")
def fi_wheel() -> Path:
    """The flashinfer-python 0.7.2.post1 wheel, downloaded once (pip) and cached across runs."""
    return fi_fixture.download_wheel(_download_cache())


@pytest.fixture(scope="session")
def fi_files(fi_wheel: Path) -> dict[str, bytes]:
    """Upstream Cake RMSNorm training files keyed by repository path."""
    return fi_fixture.extract_cake_files(fi_wheel)


@pytest.fixture(scope="session")
def fi_checkout(tmp_path_factory: pytest.TempPathFactory, fi_files: dict[str, bytes]):
    """A git checkout of the upstream files (session-wide, read-only by convention)."""
    dest = tmp_path_factory.mktemp("flashinfer-upstream") / "flashinfer"
    commit = fi_fixture.make_checkout(fi_files, dest)
    return dest, commit


@pytest.fixture(scope="session")
def vendored_rmsnorm(tmp_path_factory: pytest.TempPathFactory, fi_checkout) -> Path:
    """A fresh vendor dir holding ``fi --op rmsnorm`` of the upstream checkout (session-wide).

    Runs the vendoring tool in-process; set ``MILES_EXT_KERNELS_VENDOR_DIR`` to the returned
    path to point the runtime at it. Read-only by convention: use ``vendored_rmsnorm_copy``
    to corrupt files.
    """
    from cake_vendor.api import vendor_dir_for, vendor_op

    checkout, commit = fi_checkout
    root = tmp_path_factory.mktemp("vendored-rmsnorm-root")
    (root / "miles_ext_kernels" / "cake").mkdir(parents=True)  # a checkout's layout
    vendor_op(root, checkout, commit, "rmsnorm")
    return vendor_dir_for(root)


@pytest.fixture
def vendored_rmsnorm_copy(tmp_path: Path, vendored_rmsnorm: Path) -> Path:
    """A private copy (symlinks kept) of ``vendored_rmsnorm`` that a test may modify."""
    import shutil

    dest = tmp_path / "_vendor"
    shutil.copytree(vendored_rmsnorm, dest, symlinks=True)
    return dest
