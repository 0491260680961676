"""Fixtures of the vendoring-tool tests: fixture upstreams and downstream repos in tmp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest
from upstream_repos import FixtureRepo, init_downstream

from cake_vendor.api import vendor_dir_for, vendor_op

MIT_TEXT = (
    b"MIT License\n\nCopyright (c) fixture\n\nPermission is hereby granted, free of charge, to any "
    b"person obtaining a copy of this software...\n"
)

BASE_FILES = {
    "flashinfer/pkg/a.txt": b"alpha\n",
    "flashinfer/pkg/sub/deep/b.bin": bytes(range(256)) * 4,
    "flashinfer/pkg/run.sh": ("100755", b"#!/bin/sh\necho hi\n"),
    "flashinfer/pkg/link": ("120000", b"sub/deep/b.bin"),
    "flashinfer/pkg/\u00fcn\u00ef/\u0444\u0430\u0439\u043b.txt": "unicode \u2713\n".encode(),
    "flashinfer/pkg/crlf.txt": b"one\r\ntwo\r\n",
    "flashinfer/pkg/lf.txt": b"one\ntwo\n",
    "flashinfer/second/s.txt": b"second package\n",
    "LICENSE": MIT_TEXT,
    "NOTICE": b"Fixture NOTICE\n",
    "other/x.txt": b"not vendored\n",
}


@pytest.fixture
def upstream(tmp_path: Path) -> FixtureRepo:
    """An empty fixture upstream repository."""
    return FixtureRepo(tmp_path / "upstream")


@pytest.fixture
def downstream(tmp_path: Path) -> Path:
    """A downstream git repository root (the tool's --root)."""
    return init_downstream(tmp_path / "downstream")


@pytest.fixture
def vendor(downstream: Path, upstream: FixtureRepo):
    """Call the in-process API with the fixture upstream and downstream filled in."""

    def run(commit: str, op: str = "demo", packages=("flashinfer/pkg",), **kwargs):
        return vendor_op(downstream, upstream.path, commit, op, tuple(packages), **kwargs)

    run.vendor_dir = vendor_dir_for(downstream)
    return run
