"""The click CLI: help, exit codes, JSON reports, verify / audit / status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BASE_FILES
from upstream_repos import FixtureRepo

from cake_vendor.cli import main
from miles_ext_kernels.cake.manifest import MANIFEST_NAME, dump_manifest, load_manifest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_help_documents_every_command():
    out = subprocess.run([sys.executable, str(REPO_ROOT / "tools/vendor_cake.py"), "--help"],
                         check=True, capture_output=True, text=True).stdout
    for command in ("fi", "verify", "audit", "status"):
        assert f"  {command} " in out
    fi_help = _invoke("fi", "--help").output
    for option in ("--checkout", "--commit", "--op", "--package", "--dry-run", "--force",
                   "--json", "--root"):
        assert option in fi_help


def test_fi_dry_run_exit_codes_and_json(upstream, downstream):
    commit = upstream.commit(BASE_FILES)
    base = ["fi", "--root", str(downstream), "--checkout", str(upstream.path), "--commit",
            commit, "--op", "demo", "--package", "flashinfer/pkg"]
    dry = _invoke(*base, "--dry-run", "--json")
    assert dry.exit_code == 1
    assert "pkg/a.txt" in json.loads(dry.output)["add"]
    assert not (downstream / "miles_ext_kernels/cake/_vendor").exists()
    assert _invoke(*base).exit_code == 0
    again = _invoke(*base, "--dry-run")
    assert again.exit_code == 0 and "up to date" in again.output
    bad = _invoke(*base[:-1], "/abs", "--json")
    assert bad.exit_code == 2 and "absolute" in json.loads(bad.output)["error"]


@pytest.fixture
def vendored(upstream, downstream):
    commit = upstream.commit(BASE_FILES)
    result = _invoke("fi", "--root", str(downstream), "--checkout", str(upstream.path),
                     "--commit", commit, "--op", "demo", "--package", "flashinfer/pkg")
    assert result.exit_code == 0, result.output
    return downstream / "miles_ext_kernels/cake/_vendor"


def test_verify_exit_codes(vendored, downstream, tmp_path):
    root = str(downstream)
    assert _invoke("verify", "--root", root).exit_code == 0
    (vendored / "pkg/extra.txt").write_bytes(b"x")
    report = _invoke("verify", "--root", root, "--json")
    assert report.exit_code == 1 and json.loads(report.output)["extra"] == ["pkg/extra.txt"]
    (vendored / "pkg/extra.txt").unlink()
    (vendored / "pkg/a.txt").write_bytes(b"changed\n")
    (vendored / "pkg/run.sh").chmod(0o644)
    (vendored / "pkg/lf.txt").unlink()
    report = json.loads(_invoke("verify", "--root", root, "--json").output)
    assert report["modified"] == ["pkg/a.txt"]
    assert report["mode_changed"] == ["pkg/run.sh"]
    assert report["missing"] == ["pkg/lf.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _invoke("verify", "--root", str(empty)).exit_code == 2
    (vendored / MANIFEST_NAME).write_text("{not json")
    assert _invoke("verify", "--root", root).exit_code == 2


def test_audit_catches_manifest_edited_with_file(vendored, downstream, upstream):
    root = str(downstream)
    assert _invoke("audit", "--root", root, "--checkout", str(upstream.path)).exit_code == 0
    manifest = load_manifest(vendored)
    target = vendored / "pkg/a.txt"
    target.write_bytes(b"tampered\n")
    from dataclasses import replace

    from miles_ext_kernels.cake.manifest import FileEntry

    op = manifest.ops["demo"]
    packages = []
    for package in op.packages:
        files = dict(package.files)
        if "pkg/a.txt" in files:
            files["pkg/a.txt"] = FileEntry.from_bytes(b"tampered\n", "100644")
            del files["pkg/lf.txt"]
            (vendored / "pkg/lf.txt").unlink()
        packages.append(replace(package, files=files))
    forged = replace(manifest, ops={"demo": replace(op, packages=tuple(packages))})
    (vendored / MANIFEST_NAME).write_bytes(dump_manifest(forged))
    assert _invoke("verify", "--root", root).exit_code == 0  # offline check is fooled
    audit = _invoke("audit", "--root", root, "--checkout", str(upstream.path), "--json")
    assert audit.exit_code == 1
    report = json.loads(audit.output)
    assert any("pkg/a.txt" in line for line in report["manifest_mismatch"])
    assert any("pkg/a.txt" in line for line in report["modified"])
    assert any("pkg/lf.txt" in line for line in report["missing_downstream"])


def test_status(vendored, downstream):
    out = _invoke("status", "--root", str(downstream))
    assert out.exit_code == 0
    assert "demo" in out.output and "clean" in out.output and "license MIT" in out.output
    (vendored / "pkg/a.txt").write_bytes(b"x")
    drifted = _invoke("status", "--root", str(downstream), "--json")
    assert drifted.exit_code == 1
    status = json.loads(drifted.output)
    assert status["ops"]["demo"]["clean"] is False
    assert status["ops"]["demo"]["drift"]["modified"] == ["pkg/a.txt"]


def test_fi_dry_run_names_what_stops_the_run(vendored, downstream, upstream):
    (vendored / "LICENSE").unlink()
    (vendored / "LICENSE").mkdir()
    (vendored / "LICENSE/x").write_bytes(b"precious\n")
    commit = load_manifest(vendored).ops["demo"].commit
    base = ["fi", "--root", str(downstream), "--checkout", str(upstream.path), "--commit",
            commit, "--op", "demo", "--package", "flashinfer/pkg"]
    dry = _invoke(*base, "--dry-run")
    assert "refuse LICENSE/x (nobody owns it" in dry.output
    forced = _invoke(*base, "--force")
    assert forced.exit_code == 2 and "LICENSE/x" in forced.output
    assert (vendored / "LICENSE/x").read_bytes() == b"precious\n"


def test_audit_blames_the_recorded_commit_not_a_flag(vendored, downstream, tmp_path):
    other = FixtureRepo(tmp_path / "other-upstream")
    other.commit({"x.txt": b"another repository\n"})
    commit = load_manifest(vendored).ops["demo"].commit
    wrong = _invoke("audit", "--root", str(downstream), "--checkout", str(other.path))
    assert wrong.exit_code == 2 and "--commit" not in wrong.output
    assert f"VENDORED.json ops.demo.commit '{commit}' is not in the checkout" in wrong.output
    assert "wrong checkout or shallow clone" in wrong.output
    raw = json.loads((vendored / MANIFEST_NAME).read_bytes())
    raw["ops"]["demo"]["commit"] = "-x"
    (vendored / MANIFEST_NAME).write_text(json.dumps(raw))
    edited = _invoke("audit", "--root", str(downstream), "--checkout", str(other.path))
    assert edited.exit_code == 2 and "--commit" not in edited.output
    assert "VENDORED.json ops.demo.commit '-x' is not a full commit id" in edited.output


@pytest.mark.parametrize("emptied", [
    lambda raw: raw.update(ops={}),
    lambda raw: raw["ops"]["demo"].update(packages=[]),
])
def test_status_agrees_with_verify_on_unowned_files(vendored, downstream, emptied):
    raw = json.loads((vendored / MANIFEST_NAME).read_bytes())
    emptied(raw)
    (vendored / MANIFEST_NAME).write_text(json.dumps(raw))
    root = str(downstream)
    verify = _invoke("verify", "--root", root, "--json")
    status = _invoke("status", "--root", root, "--json")
    assert verify.exit_code == status.exit_code == 1
    extra = json.loads(verify.output)["extra"]
    assert "pkg/a.txt" in extra
    report = json.loads(status.output)
    assert report["clean"] is False and report["drift"]["extra"] == extra
    text = _invoke("status", "--root", root)
    assert text.exit_code == 1 and "extra pkg/a.txt (owned by no op" in text.output
    assert "DRIFT" in text.output


def test_custom_layout_is_vendored_with_a_runtime_warning(upstream, downstream):
    commit = upstream.commit(BASE_FILES)
    base = ["fi", "--root", str(downstream), "--checkout", str(upstream.path), "--commit",
            commit, "--op", "rmsnorm", "--package", "flashinfer/pkg"]
    dry = json.loads(_invoke(*base, "--dry-run", "--json").output)
    assert any("layout 'custom'" in n and "skips this op" in n for n in dry["notes"])
    done = _invoke(*base)
    assert done.exit_code == 0
    assert "warning: op 'rmsnorm' has layout 'custom'" in done.output
    assert "skips this op with a warning" in done.output
    assert "known: backend-packages, table-0.7" in done.output
    status = _invoke("status", "--root", str(downstream))
    assert status.exit_code == 0 and "warning: op 'rmsnorm' has layout 'custom'" in status.output
    report = json.loads(_invoke("status", "--root", str(downstream), "--json").output)
    assert report["ops"]["rmsnorm"]["warnings"]


def test_profile_layout_has_no_warning(upstream, vendor):
    table = {"flashinfer/cake_rmsnorm_train.py": b"facade\n",
             "flashinfer/jit/cake_rmsnorm_train.py": b"table\n",
             "csrc/cake_rmsnorm_train/k_kernel.cu": b"kernel\n",
             "csrc/tvm_ffi_utils.h": b"utils\n", "include/flashinfer/layout.cuh": b"layout\n"}
    result = vendor(upstream.commit(table), op="rmsnorm", packages=())
    assert result.layout == "table-0.7" and result.notes == []


def test_root_must_be_a_checkout_and_vendor_dir_a_directory(upstream, downstream, tmp_path):
    commit = upstream.commit(BASE_FILES)
    empty = tmp_path / "empty"
    empty.mkdir()
    fi = ["fi", "--checkout", str(upstream.path), "--commit", commit, "--op", "demo",
          "--package", "flashinfer/pkg"]
    for command in (fi, ["verify"], ["status"]):
        result = _invoke(*command, "--root", str(empty))
        assert result.exit_code == 2
        assert f"--root '{empty}' is not a miles-ext-kernels checkout" in result.output
    assert list(empty.iterdir()) == []
    vendor_dir = downstream / "miles_ext_kernels/cake/_vendor"
    vendor_dir.write_bytes(b"not a directory\n")
    for command in (fi, ["verify"], ["status"]):
        result = _invoke(*command, "--root", str(downstream))
        assert result.exit_code == 2
        assert f"{vendor_dir}: exists but is not a directory" in result.output
    assert vendor_dir.read_bytes() == b"not a directory\n"


def test_counts_are_singular_for_one(upstream, downstream):
    commit = upstream.commit({"flashinfer/one/only.txt": b"x\n"})
    _invoke("fi", "--root", str(downstream), "--checkout", str(upstream.path), "--commit",
            commit, "--op", "demo", "--package", "flashinfer/one")
    verify = _invoke("verify", "--root", str(downstream)).output
    assert ": 1 file, clean" in verify
    status = _invoke("status", "--root", str(downstream)).output
    assert "one: 1 file\n" in status and "1 op, 1 file: clean" in status
