"""`fi` on fixture upstreams: byte-for-byte copies, modes, symlinks, updates, idempotence."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest
from conftest import BASE_FILES
from upstream_repos import snapshot

from miles_ext_kernels.cake.manifest import (
    MANIFEST_NAME,
    git_blob_id,
    load_manifest,
    verify_files,
)

PKG_FILES = {k: v for k, v in BASE_FILES.items() if k.startswith("flashinfer/pkg/")}


def _data(value) -> bytes:
    return value[1] if isinstance(value, tuple) else value


def test_copies_raw_blobs_modes_symlinks(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    result = vendor(commit)
    vdir = vendor.vendor_dir
    assert result.applied and result.commit == commit
    tree = upstream.ls_tree(commit)
    manifest = load_manifest(vdir)
    op = manifest.ops["demo"]
    assert op.commit == commit and op.tree == upstream.repo.commit(commit).tree.hexsha
    files = op.files()
    expected_paths = {p.removeprefix("flashinfer/") for p in PKG_FILES} | {"LICENSE", "NOTICE"}
    assert set(files) == expected_paths
    for upstream_path, value in {**PKG_FILES, "LICENSE": BASE_FILES["LICENSE"],
                                 "NOTICE": BASE_FILES["NOTICE"]}.items():
        rel = upstream_path.removeprefix("flashinfer/")
        mode, blob = tree[upstream_path]
        assert files[rel].blob == blob and files[rel].mode == mode
        target = vdir / rel
        if mode == "120000":
            assert target.is_symlink() and os.readlink(target) == _data(value).decode()
        else:
            assert target.read_bytes() == _data(value)
            assert bool(target.stat().st_mode & 0o111) == (mode == "100755")
    assert op.license.spdx == "MIT" and op.license.files == ("LICENSE", "NOTICE")
    assert verify_files(vdir, manifest).clean
    assert (vdir / ".gitattributes").read_bytes().count(b"-text -filter -ident") == 1


def test_worktree_autocrlf_and_dirty_files_change_nothing(upstream, vendor):
    files = {**BASE_FILES, ".gitattributes": b"*.txt text eol=crlf\n"}
    commit = upstream.commit(files)
    repo = upstream.repo
    with repo.config_writer() as cfg:
        cfg.set_value("core", "autocrlf", "true")
    repo.git.reset("--hard", commit)
    checked_out = upstream.path / "flashinfer/pkg/lf.txt"
    assert checked_out.read_bytes() == b"one\r\ntwo\r\n"  # the working tree was rewritten
    (upstream.path / "flashinfer/pkg/a.txt").write_bytes(b"dirty edit\n")
    vendor(commit)
    assert (vendor.vendor_dir / "pkg/lf.txt").read_bytes() == b"one\ntwo\n"
    assert (vendor.vendor_dir / "pkg/crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (vendor.vendor_dir / "pkg/a.txt").read_bytes() == b"alpha\n"


def test_update_adds_changes_removes_and_dry_run(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first, packages=("flashinfer/pkg",))
    changed = dict(BASE_FILES)
    del changed["flashinfer/pkg/sub/deep/b.bin"]
    changed["flashinfer/pkg/link"] = ("120000", b"a.txt")
    changed["flashinfer/pkg/a.txt"] = b"alpha v2\n"
    changed["flashinfer/pkg/new/c.txt"] = b"new file\n"
    changed["flashinfer/pkg/lf.txt"] = ("100755", b"one\ntwo\n")
    second = upstream.commit(changed, parent=first)
    vdir = vendor.vendor_dir
    before = snapshot(vdir)

    dry = vendor(second, dry_run=True)
    assert snapshot(vdir) == before
    summary = dry.plan.summary()
    assert summary["add"] == ["pkg/new/c.txt"]
    assert summary["update"] == ["pkg/a.txt", "pkg/link"]
    assert summary["delete"] == ["pkg/sub/deep/b.bin"]
    assert summary["mode"] == ["pkg/lf.txt"]
    assert dry.plan.changes_anything and not dry.applied

    vendor(second)
    assert not (vdir / "pkg/sub").exists()  # stale file and its emptied dirs are gone
    assert (vdir / "pkg/new/c.txt").read_bytes() == b"new file\n"
    assert os.readlink(vdir / "pkg/link") == "a.txt"
    assert (vdir / "pkg/lf.txt").stat().st_mode & 0o111
    manifest = load_manifest(vdir)
    assert manifest.ops["demo"].commit == second
    assert verify_files(vdir, manifest).clean
    assert not vendor(second, dry_run=True).plan.changes_anything


def test_noop_rerun_changes_no_byte_and_no_mtime(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    before = snapshot(vendor.vendor_dir)
    dir_mtime = vendor.vendor_dir.stat().st_mtime_ns
    result = vendor(commit)
    assert not result.applied and not result.plan.changes_anything
    assert snapshot(vendor.vendor_dir) == before
    assert vendor.vendor_dir.stat().st_mtime_ns == dir_mtime
    assert MANIFEST_NAME in before


def test_abbreviated_commit_records_full_id(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    vendor(commit[:10])
    op = load_manifest(vendor.vendor_dir).ops["demo"]
    assert op.commit == commit and op.ref == commit[:10]


def test_second_op_is_never_touched(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first, op="other", packages=("flashinfer/second",))
    other_before = load_manifest(vendor.vendor_dir).ops["other"]
    other_file = vendor.vendor_dir / "second/s.txt"
    mtime = other_file.stat().st_mtime_ns
    vendor(first, op="demo")
    changed = {**BASE_FILES, "flashinfer/pkg/a.txt": b"v2\n", "LICENSE": b"custom terms\n"}
    second = upstream.commit(changed, parent=first)
    with pytest.raises(Exception, match="another op"):
        vendor(second, op="demo")  # LICENSE is shared with op "other" at a different content
    changed["LICENSE"] = BASE_FILES["LICENSE"]
    third = upstream.commit(changed, parent=second)
    vendor(third, op="demo")
    manifest = load_manifest(vendor.vendor_dir)
    assert manifest.ops["other"] == other_before
    assert other_file.stat().st_mtime_ns == mtime
    assert manifest.ops["demo"].commit == third
    # NOTICE leaves demo's packages but op "other" still owns it: the file stays.
    fourth = upstream.commit({k: v for k, v in changed.items() if k != "NOTICE"}, parent=third)
    vendor(fourth, op="demo")
    manifest = load_manifest(vendor.vendor_dir)
    assert "NOTICE" not in manifest.ops["demo"].files()
    assert manifest.ops["other"].license.files == ("LICENSE", "NOTICE")
    assert (vendor.vendor_dir / "NOTICE").read_bytes() == BASE_FILES["NOTICE"]


def test_progress_bar_only_on_a_tty(upstream, vendor):
    class FakeTty(io.StringIO):
        def isatty(self) -> bool:
            return True

    commit = upstream.commit(BASE_FILES)
    plain = io.StringIO()
    vendor(commit, progress=plain, dry_run=True)
    assert plain.getvalue() == ""
    tty = FakeTty()
    vendor(commit, progress=tty, dry_run=True)
    assert "reading upstream blobs" in tty.getvalue() and "100%" in tty.getvalue()


def test_downstream_git_add_keeps_bytes(upstream, vendor, downstream):
    (downstream / ".gitattributes").write_bytes(b"* text=auto eol=crlf\n")
    subprocess.run(["git", "-C", str(downstream), "config", "core.autocrlf", "true"], check=True)
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    subprocess.run(["git", "-C", str(downstream), "add", "-A"], check=True)
    staged = subprocess.run(["git", "-C", str(downstream), "ls-files", "-s", "-z"],
                            check=True, capture_output=True, text=True).stdout
    index = {}
    for record in filter(None, staged.split("\0")):
        meta, path = record.split("\t", 1)
        mode, sha, _ = meta.split()
        index[path] = (mode, sha)
    files = load_manifest(vendor.vendor_dir).ops["demo"].files()
    for rel, entry in files.items():
        assert index[f"miles_ext_kernels/cake/_vendor/{rel}"] == (entry.mode, entry.blob), rel


def test_git_blob_id_matches_git(tmp_path):
    data = b"a\r\nb\x00\xff\n" * 7
    path = tmp_path / "blob"
    path.write_bytes(data)
    expected = subprocess.run(["git", "hash-object", "--no-filters", str(path)],
                              check=True, capture_output=True, text=True).stdout.strip()
    assert git_blob_id(data) == expected


def test_default_checkout_from_pyproject(upstream, downstream):
    from cake_vendor.api import vendor_op

    commit = upstream.commit(BASE_FILES)
    rel = os.path.relpath(upstream.path, downstream)
    (downstream / "pyproject.toml").write_text(
        f'[tool.miles-ext-kernels.vendor]\ncheckout = "{rel}"\n', encoding="utf-8"
    )
    result = vendor_op(Path(downstream), None, commit, "demo", ("flashinfer/pkg",))
    assert result.applied and result.commit == commit


def test_api_refuses_a_root_that_is_not_a_checkout(upstream, tmp_path):
    from cake_vendor.api import vendor_dir_for, vendor_op
    from cake_vendor.errors import VendorError

    commit = upstream.commit(BASE_FILES)
    bare = tmp_path / "not-a-checkout"
    bare.mkdir()
    with pytest.raises(VendorError, match=r"root '.*not-a-checkout' is not a miles-ext-kernels "
                                          r"checkout \(it has no miles_ext_kernels/cake\)"):
        vendor_op(bare, upstream.path, commit, "demo", ("flashinfer/pkg",))
    assert list(bare.iterdir()) == []  # nothing written
    with pytest.raises(VendorError, match="not-a-checkout' is not a miles-ext-kernels checkout"):
        vendor_dir_for(bare)
    with pytest.raises(VendorError, match=r"root '.*absent': no such directory"):
        vendor_op(tmp_path / "absent", upstream.path, commit, "demo", ("flashinfer/pkg",))
