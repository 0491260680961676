"""Every refusal of `fi` leaves the vendor directory exactly as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BASE_FILES
from filelock import FileLock
from upstream_repos import FixtureRepo, init_downstream, snapshot

import cake_vendor.api as api
import cake_vendor.apply as apply_module
from cake_vendor.cli import main
from cake_vendor.errors import VendorError
from miles_ext_kernels.cake.manifest import load_manifest, verify_files

LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
)


def _refused(vendor, commit, match, **kwargs) -> VendorError:
    before = snapshot(vendor.vendor_dir)
    with pytest.raises(VendorError, match=match) as info:
        vendor(commit, **kwargs)
    assert snapshot(vendor.vendor_dir) == before
    return info.value


@pytest.mark.parametrize(
    "extra, match, detail",
    [
        ({"flashinfer/pkg/esc": ("120000", b"../../other/x.txt")}, "cannot be vendored",
         "outside its package"),
        ({"flashinfer/pkg/abs": ("120000", b"/etc/passwd")}, "cannot be vendored", "absolute"),
        ({"flashinfer/pkg/mod": ("gitlink", "1" * 40)}, "cannot be vendored", "gitlink"),
        ({"flashinfer/pkg/big.bin": LFS_POINTER}, "cannot be vendored", "LFS pointer"),
        ({"flashinfer/pkg/../x": b"x"}, "cannot be vendored", "'..'"),
        ({"flashinfer/pkg/.git/config": b"x"}, "cannot be vendored", ".git"),
        ({"flashinfer/pkg/.GIT/hooks": b"x"}, "cannot be vendored", ".git"),
        ({"flashinfer/pkg/a\\b.txt": b"x"}, "cannot be vendored", "backslash"),
        ({"flashinfer/pkg/A.TXT": b"x"}, "case-insensitive", "pkg/A.TXT <-> pkg/a.txt"),
        ({"flashinfer/pkg/Sub/z": b"x"}, "case-insensitive", "pkg/Sub <-> pkg/sub"),
    ],
)
def test_unsafe_entries_refused_nothing_written(upstream, vendor, extra, match, detail):
    good = upstream.commit(BASE_FILES)
    vendor(good)  # a previous state that must survive
    bad = upstream.commit({**BASE_FILES, **extra}, parent=good)
    error = _refused(vendor, bad, match)
    assert detail in error.render()
    assert load_manifest(vendor.vendor_dir).ops["demo"].commit == good


def test_refusals_on_first_run_create_nothing(upstream, vendor):
    bad = upstream.commit({**BASE_FILES, "flashinfer/pkg/mod": ("gitlink", "2" * 40)})
    _refused(vendor, bad, "cannot be vendored")
    assert not vendor.vendor_dir.exists()


def test_symlink_inside_kept_and_single_file_symlink_refused(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    assert (vendor.vendor_dir / "pkg/link").is_symlink()
    _refused(vendor, commit, "cannot be vendored", packages=("flashinfer/pkg/link",), op="one")


@pytest.mark.parametrize(
    "package, match",
    [
        ("/etc", "absolute"),
        ("flashinfer/../etc", "'..'"),
        ("flashinfer\\pkg", "backslash"),
        ("flash\0infer", "NUL"),
        ("flashinfer/.git", ".git"),
        ("flashinfer", "whole upstream package"),
        ("flashinfer/VENDORED.json", "reserves"),
    ],
)
def test_hostile_package_arguments(upstream, vendor, package, match):
    commit = upstream.commit(BASE_FILES)
    _refused(vendor, commit, match, packages=(package,))


def test_missing_package_names_nearest_paths(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    error = _refused(vendor, commit, "no such path", packages=("flashinfer/pgk",))
    assert "flashinfer/pkg" in error.details


def test_overlapping_packages_refused(upstream, vendor):
    commit = upstream.commit(BASE_FILES)
    _refused(vendor, commit, "overlap", packages=("flashinfer/pkg", "flashinfer/pkg/sub"))
    _refused(vendor, commit, "given twice", packages=("flashinfer/pkg", "flashinfer/pkg/"))


def test_unknown_and_ambiguous_commits(upstream, vendor):
    files = {"flashinfer/pkg/a.txt": b"a\n"}
    first, second = upstream.ambiguous_commits(files)
    assert first[:4] == second[:4] and first != second
    error = _refused(vendor, first[:4], "ambiguous")
    listed = "\n".join(error.details)
    assert first in listed and second in listed
    vendor(first[:12])
    assert load_manifest(vendor.vendor_dir).ops["demo"].commit == first
    _refused(vendor, "0" * 40, "no such commit")
    _refused(vendor, "--all", "not a valid commit")


def test_sha256_repository_refused(tmp_path, vendor):
    repo = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    (repo / "f").write_text("x")
    git = ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=b@c"]
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    with pytest.raises(VendorError, match="sha256 object format"):
        api.vendor_op(vendor.vendor_dir.parents[2], repo, "HEAD", "demo", ("f",))
    assert not vendor.vendor_dir.exists()


def test_profile_layouts(upstream, vendor):
    old_layout = {
        "flashinfer/cake_rmsnorm_train.py": b"facade\n",
        "flashinfer/jit/cake_rmsnorm_train.py": b"table\n",
        "csrc/cake_rmsnorm_train/k_kernel.cu": b"kernel\n",
        "csrc/tvm_ffi_utils.h": b"utils\n",
        "include/flashinfer/layout.cuh": b"layout\n",
        "LICENSE": b"Apache License\nVersion 2.0, January 2004\n",
    }
    commit = upstream.commit(old_layout)
    result = vendor(commit, op="rmsnorm", packages=())
    assert result.layout == "table-0.7"
    op = load_manifest(vendor.vendor_dir).ops["rmsnorm"]
    assert {p.vendored_path for p in op.packages} == {
        "cake_rmsnorm_train.py", "jit/cake_rmsnorm_train.py", "csrc/cake_rmsnorm_train",
        "csrc/tvm_ffi_utils.h", "include/flashinfer/layout.cuh", "LICENSE"}
    assert op.license.spdx == "Apache-2.0"
    new_layout = {
        **old_layout,
        "flashinfer/cake_rmsnorm_det_train_backend/build.json": b"{}\n",
        "flashinfer/cake_rmsnorm_train_backend/build.json": b"{}\n",
    }
    result = vendor(upstream.commit(new_layout, parent=commit), op="rmsnorm", packages=())
    assert result.layout == "backend-packages"
    assert (vendor.vendor_dir / "cake_rmsnorm_det_train_backend/build.json").is_file()
    assert not (vendor.vendor_dir / "csrc").exists()  # the old layout's files were removed
    neither = upstream.commit({"README": b"x\n"}, parent=commit)
    error = _refused(vendor, neither, "none of the known layouts", op="rmsnorm", packages=())
    assert any("table-0.7" in d for d in error.details)
    _refused(vendor, neither, "no profile", op="nosuchop", packages=())


def test_local_edits_refused_without_force(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    edited = vendor.vendor_dir / "pkg/a.txt"
    edited.write_bytes(b"local edit\n")
    (vendor.vendor_dir / "pkg/run.sh").chmod(0o644)
    second = upstream.commit({**BASE_FILES, "flashinfer/pkg/lf.txt": b"v2\n"}, parent=first)
    error = _refused(vendor, second, "edited locally")
    assert error.details == ["pkg/a.txt", "pkg/run.sh"]
    _refused(vendor, first, "edited locally")  # even re-vendoring the same commit
    vendor(second, force=True)
    assert edited.read_bytes() == b"alpha\n"
    assert verify_files(vendor.vendor_dir, load_manifest(vendor.vendor_dir)).clean


def test_only_manifest_owned_files_deleted(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    stray = vendor.vendor_dir / "pkg/sub/deep/mine.txt"
    stray.write_bytes(b"nobody owns me\n")
    reduced = {k: v for k, v in BASE_FILES.items() if not k.startswith("flashinfer/pkg/sub")}
    reduced["flashinfer/pkg/link"] = ("120000", b"a.txt")
    vendor(upstream.commit(reduced, parent=first))
    assert stray.read_bytes() == b"nobody owns me\n"
    assert not (vendor.vendor_dir / "pkg/sub/deep/b.bin").exists()
    report = verify_files(vendor.vendor_dir, load_manifest(vendor.vendor_dir))
    assert report.extra == ("pkg/sub/deep/mine.txt",)


def test_unowned_file_in_the_way_refused(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    squatter = vendor.vendor_dir / "pkg/new.txt"
    squatter.write_bytes(b"mine\n")
    second = upstream.commit({**BASE_FILES, "flashinfer/pkg/new.txt": b"theirs\n"}, parent=first)
    error = _refused(vendor, second, "nobody owns", force=True)
    assert error.details == ["pkg/new.txt"]


def test_lock_held_refuses(upstream, vendor, monkeypatch):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    monkeypatch.setattr(api, "LOCK_TIMEOUT_S", 0.05)
    with FileLock(str(vendor.vendor_dir / ".vendor.lock")):
        second = upstream.commit({**BASE_FILES, "flashinfer/pkg/a.txt": b"b\n"}, parent=commit)
        _refused(vendor, second, "holds the lock")


def test_downstream_rules_that_rewrite_or_ignore_are_refused(upstream, vendor, downstream):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    info = downstream / ".git/info/attributes"
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text("*.txt filter=lfs\n")
    second = upstream.commit({**BASE_FILES, "flashinfer/pkg/a.txt": b"v2\n"}, parent=first)
    error = _refused(vendor, second, "would not keep the vendored bytes")
    assert any("filter=lfs" in d for d in error.details)
    info.write_text("")
    hiding = upstream.commit(
        {**BASE_FILES, "flashinfer/pkg/.gitignore": b"*.bin\n"}, parent=first
    )
    error = _refused(vendor, hiding, "would not keep")
    assert any("pkg/sub/deep/b.bin" in d and "git-ignored" in d for d in error.details)
    nested_attrs = upstream.commit(
        {**BASE_FILES, "flashinfer/pkg/.gitattributes": b"*.txt text eol=crlf\n"}, parent=first
    )
    error = _refused(vendor, nested_attrs, "would not keep")
    assert any("text=set" in d for d in error.details)


def _transition(upstream, vendor) -> tuple[str, str]:
    """Vendor a first commit; return it and a second one with every kind of change."""
    first = upstream.commit(BASE_FILES)
    vendor(first)
    changed = {k: v for k, v in BASE_FILES.items() if k != "flashinfer/pkg/sub/deep/b.bin"}
    changed["flashinfer/pkg/a.txt"] = b"v2\n"
    changed["flashinfer/pkg/sub/deep"] = b"a file where a directory was\n"
    changed["flashinfer/pkg/link"] = ("120000", b"a.txt")
    changed["flashinfer/pkg/new/deeper/n.txt"] = b"new\n"
    del changed["flashinfer/pkg/run.sh"]
    changed["flashinfer/pkg/run.sh/inner.txt"] = b"a directory where a file was\n"
    changed["flashinfer/pkg/lf.txt"] = ("100755", b"one\ntwo\n")
    return first, upstream.commit(changed, parent=first)


@pytest.mark.parametrize("step_index", range(12))
def test_fault_at_any_step_leaves_previous_state(upstream, vendor, step_index):
    first, second = _transition(upstream, vendor)
    steps: list[str] = []

    def record(step: str) -> None:
        steps.append(step)

    # learn the steps on a scratch copy of the same transition
    scratch_root = init_downstream(upstream.path.parent / "scratch-down")
    api.vendor_op(scratch_root, upstream.path, first, "demo", ("flashinfer/pkg",))
    api.vendor_op(scratch_root, upstream.path, second, "demo", ("flashinfer/pkg",), fault=record)
    assert len(steps) >= 12 and steps[-1] == "manifest-temp"
    target = steps[min(step_index * len(steps) // 12, len(steps) - 1)]
    before = snapshot(vendor.vendor_dir)

    def fail(step: str) -> None:
        if step == target:
            raise OSError(f"injected failure at {step}")

    with pytest.raises(OSError, match="injected"):
        vendor(second, fault=fail)
    assert snapshot(vendor.vendor_dir) == before
    vendor(second)  # and the next run completes
    assert load_manifest(vendor.vendor_dir).ops["demo"].commit == second


def test_killed_process_is_rolled_back_by_next_run(upstream, vendor, downstream):
    first, second = _transition(upstream, vendor)
    before = snapshot(vendor.vendor_dir)
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path[:0] = [{str(Path.cwd())!r}, {str(Path.cwd() / "tools")!r}]
        from cake_vendor.api import vendor_op
        def die(step):
            if step.startswith("place:"):
                os._exit(9)
        vendor_op({str(downstream)!r}, {str(upstream.path)!r}, {second!r}, "demo",
                  ("flashinfer/pkg",), fault=die)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == 9
    assert (vendor.vendor_dir / ".vendor-txn").exists()
    assert snapshot(vendor.vendor_dir, skip=(".vendor.lock",)) != before
    from cake_vendor.apply import recover

    assert recover(vendor.vendor_dir) == "rolled back"
    assert snapshot(vendor.vendor_dir) == {k: v for k, v in before.items()}


def _dir_at(vdir: Path, rel: str, inner: str = "x") -> None:
    """Replace the vendored file ``rel`` with a directory holding one file nobody owns."""
    (vdir / rel).unlink()
    (vdir / rel).mkdir()
    (vdir / rel / inner).parent.mkdir(parents=True, exist_ok=True)
    (vdir / rel / inner).write_bytes(b"precious\n")


def _file_at(vdir: Path, rel: str) -> None:
    """Replace the vendored directory ``rel`` with a file nobody owns."""
    shutil.rmtree(vdir / rel)
    (vdir / rel).write_bytes(b"precious\n")


def _link_at(vdir: Path, rel: str) -> None:
    """Replace the vendored directory ``rel`` with a symlink to a copy outside the vendor dir."""
    outside = vdir.parents[3] / "outside"
    shutil.copytree(vdir / rel, outside, symlinks=True)
    shutil.rmtree(vdir / rel)
    (vdir / rel).symlink_to(outside)


@pytest.mark.parametrize("mess, blockers", [
    (lambda v: _dir_at(v, "LICENSE"), ["LICENSE/x"]),
    (lambda v: _dir_at(v, "pkg/a.txt", "deeper/y"), ["pkg/a.txt/deeper/y"]),
    (lambda v: _dir_at(v, "pkg/a.txt", "__pycache__/a.pyc"), ["pkg/a.txt/__pycache__/a.pyc"]),
    (lambda v: _file_at(v, "pkg/sub/deep"), ["pkg/sub/deep"]),
    (lambda v: _link_at(v, "pkg/sub"), ["pkg/sub"]),
    (lambda v: _dir_at(v, ".gitattributes"), [".gitattributes"]),
])
def test_unowned_shapes_in_wanted_paths_refused_even_with_force(upstream, vendor, mess,
                                                                 blockers):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    mess(vendor.vendor_dir)
    dry = vendor(commit, dry_run=True)
    assert dry.plan.unowned_in_the_way == blockers
    for force in (False, True):
        error = _refused(vendor, commit, "nobody owns", force=force)
        assert error.details == blockers


def test_owned_path_turned_directory_is_left_alone_when_the_op_drops_it(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    _dir_at(vendor.vendor_dir, "pkg/a.txt")
    dropped = {k: v for k, v in BASE_FILES.items() if k != "flashinfer/pkg/a.txt"}
    vendor(upstream.commit(dropped, parent=first), force=True)
    assert (vendor.vendor_dir / "pkg/a.txt/x").read_bytes() == b"precious\n"
    report = verify_files(vendor.vendor_dir, load_manifest(vendor.vendor_dir))
    assert report.extra == ("pkg/a.txt/x",)


def test_directory_of_another_op_in_a_wanted_path_is_named(upstream, vendor):
    first = upstream.commit(BASE_FILES)
    vendor(first, op="other", packages=("flashinfer/second",))
    clash = upstream.commit({**BASE_FILES, "flashinfer/second": b"a file now\n"}, parent=first)
    error = _refused(vendor, clash, "another op", op="demo", packages=("flashinfer/second",),
                     force=True)
    assert error.details == ["second/s.txt"]


@pytest.mark.parametrize("journal, why", [
    (b"{bad", "unreadable"),
    (b'{"entries": [], "creates": [], "manifest_before": null}', "'manifest_after'"),
    (b'[1, 2]', "not a JSON object"),
    (b'{"entries": [{"path": "../../x", "staged": null, "backup": "0"}], "creates": [], '
     b'"manifest_before": null, "manifest_after": "0"}', "not a safe relative path"),
    (None, "no journal.json"),
])
def test_unreadable_journal_stops_fi_and_keeps_the_backup(upstream, vendor, downstream,
                                                          journal, why):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    txn = vendor.vendor_dir / ".vendor-txn"
    (txn / "old").mkdir(parents=True)
    (txn / "old/0").write_bytes(b"the only copy of a replaced file\n")
    if journal is not None:
        (txn / "journal.json").write_bytes(journal)
    error = _refused(vendor, commit, "cannot be rolled back")
    assert why in str(error) and "old" in str(error) and "remove" in str(error)
    assert error.exit_code == 2
    status = _status_json(downstream)
    assert status["pending_transaction"] and "cannot be rolled back" in status[
        "transaction_problem"]


def _status_json(downstream: Path) -> dict:
    """``status --json`` of ``downstream`` through the CLI."""
    result = CliRunner().invoke(main, ["status", "--root", str(downstream), "--json"])
    return json.loads(result.output)


def test_journal_is_written_atomically(upstream, vendor, monkeypatch):
    first = upstream.commit(BASE_FILES)
    vendor(first)
    second = upstream.commit({**BASE_FILES, "flashinfer/pkg/a.txt": b"v2\n"}, parent=first)
    replaced: list[str] = []
    real_replace = apply_module.os.replace

    def spy(src, dst):
        replaced.append(Path(dst).name)
        return real_replace(src, dst)

    monkeypatch.setattr(apply_module.os, "replace", spy)
    vendor(second)
    assert replaced[0] == "journal.json"


def _drop_object(upstream: FixtureRepo, oid: str) -> None:
    """Delete one loose object from the fixture upstream (a corrupt or shallow checkout)."""
    (upstream.path / ".git/objects" / oid[:2] / oid[2:]).unlink()


@pytest.mark.parametrize("path", ["flashinfer/pkg/a.txt", "flashinfer/pkg/sub/deep",
                                  "flashinfer/pkg"])
def test_missing_upstream_object_is_a_clear_error(upstream, vendor, downstream, path):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    oid = upstream.repo.git.rev_parse(f"{commit}:{path}")
    _drop_object(upstream, oid)
    for dry_run in (True, False):
        error = _refused(vendor, commit, "corrupt or shallow", dry_run=dry_run)
        assert oid in str(error) and "fsck" in str(error) and str(upstream.path) in str(error)
    audit = CliRunner().invoke(main, ["audit", "--root", str(downstream), "--checkout",
                                      str(upstream.path)])
    assert audit.exit_code == 2 and "corrupt or shallow" in audit.output and oid in audit.output


@pytest.mark.parametrize("damage, match", [
    (lambda p: p.write_text(p.read_text().replace('"schema": 1', '"schema": 2')),
     "schema 2 is not supported"),
    (lambda p: (p.unlink(), p.mkdir()), "cannot read"),
])
def test_bad_manifest_is_named_once(upstream, vendor, damage, match):
    commit = upstream.commit(BASE_FILES)
    vendor(commit)
    damage(vendor.vendor_dir / "VENDORED.json")
    for dry_run in (True, False):
        error = _refused(vendor, commit, match, dry_run=dry_run)
        assert str(error).count("VENDORED.json") == 1
