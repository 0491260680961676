"""manifest.py (shared with the runtime), path rules and license detection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cake_vendor.licenses import detect_spdx
from cake_vendor.paths import case_collisions, path_problem, symlink_problem, vendored_path_for
from cake_vendor.profiles import PROFILES, layout_warnings
from miles_ext_kernels.cake import manifest as m
from miles_ext_kernels.cake.packages.discovery import SUPPORTED_LAYOUTS


def _sample() -> m.Manifest:
    files = {"pkg/b.txt": m.FileEntry.from_bytes(b"b", "100755"),
             "pkg/a.txt": m.FileEntry.from_bytes(b"a", "100644")}
    package = m.PackageEntry("flashinfer/pkg", "pkg", "0" * 40, "tree", "source", files)
    op = m.OpEntry("abc", "1" * 40, "2" * 40, "0.1.0", "custom",
                   m.LicenseEntry("MIT", ("LICENSE",)), (package,))
    return m.Manifest(m.UpstreamInfo("flashinfer", None, "sha1"), {"demo": op})


def test_dump_is_canonical_and_round_trips(tmp_path):
    data = m.dump_manifest(_sample())
    assert data.endswith(b"}\n") and b"\r" not in data
    raw = json.loads(data)
    assert data == (json.dumps(raw, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    (tmp_path / m.MANIFEST_NAME).write_bytes(data)
    loaded = m.load_manifest(tmp_path)
    assert loaded == _sample() and m.dump_manifest(loaded) == data
    assert m.load_manifest(tmp_path / "absent") is None


@pytest.mark.parametrize("mutate, match", [
    (lambda r: r.update(schema=2), "schema 2"),
    (lambda r: r["ops"]["demo"]["packages"][0]["files"]["pkg/a.txt"].update(mode="100664"),
     "mode"),
    (lambda r: r["ops"]["demo"]["packages"][0]["files"].update(
        {"../x": r["ops"]["demo"]["packages"][0]["files"]["pkg/a.txt"]}), "unsafe path"),
    (lambda r: r["ops"]["demo"].pop("commit"), "missing key 'commit'"),
    (lambda r: _package(r).update(vendored_path="../../.."),
     r"packages\[0\]\.vendored_path: unsafe path '\.\./\.\./\.\.'"),
    (lambda r: _package(r).update(upstream_path="/etc"), r"upstream_path: unsafe path '/etc'"),
    (lambda r: r.update(schema=True), "schema: expected an integer, got bool"),
    (lambda r: _package(r)["files"]["pkg/a.txt"].update(size=True), "expected an integer"),
    (lambda r: _package(r).update(role=5), "role: expected a string, got int"),
    (lambda r: _package(r).update(role="docs"), r"role: 'docs' is not one of \['license'"),
    (lambda r: _package(r).update(type="commit"), "type: 'commit' is not one of"),
    (lambda r: r["ops"]["demo"]["license"].update(files=[1]),
     r"license\.files\[0\]: expected a string, got int"),
    (lambda r: r["ops"]["demo"]["license"].update(files=["../x"]), "unsafe path"),
    (lambda r: r["ops"].update(demo="x"), "ops.demo: expected an object, got str"),
    (lambda r: r["ops"]["demo"]["packages"].append(7), r"packages\[1\]: expected an object"),
])
def test_bad_manifests_are_named(mutate, match):
    raw = json.loads(m.dump_manifest(_sample()))
    mutate(raw)
    with pytest.raises(m.ManifestError, match=match):
        m.manifest_from_dict(raw)


def _package(raw: dict) -> dict:
    return raw["ops"]["demo"]["packages"][0]


@pytest.mark.parametrize("raw", [[], "x", None, 3])
def test_manifest_that_is_not_an_object_says_so(raw):
    with pytest.raises(m.ManifestError, match="VENDORED.json: expected an object"):
        m.manifest_from_dict(raw)


def test_sha256_blob_id_matches_git(tmp_path):
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    (repo / "f").write_bytes(b"data\r\n")
    out = subprocess.run(["git", "-C", str(repo), "hash-object", "--no-filters", "f"],
                         check=True, capture_output=True, text=True).stdout.strip()
    assert m.git_blob_id(b"data\r\n", "sha256") == out
    with pytest.raises(ValueError, match="object_format"):
        m.git_blob_id(b"", "md5")


def test_default_vendor_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(m.VENDOR_DIR_ENV, raising=False)
    assert m.default_vendor_dir() == Path(m.__file__).resolve().parent / "_vendor"
    monkeypatch.setenv(m.VENDOR_DIR_ENV, str(tmp_path))
    assert m.default_vendor_dir() == tmp_path


def test_verify_files_ignores_tool_files_and_pycache(tmp_path):
    manifest = _sample()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/a.txt").write_bytes(b"a")
    (tmp_path / "pkg/b.txt").write_bytes(b"b")
    (tmp_path / "pkg/b.txt").chmod(0o755)
    for name in (m.MANIFEST_NAME, ".gitattributes", ".gitignore", ".vendor.lock"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "pkg/__pycache__").mkdir()
    (tmp_path / "pkg/__pycache__/a.pyc").write_bytes(b"")
    assert m.verify_files(tmp_path, manifest).clean
    (tmp_path / "pkg/b.txt").chmod(0o644)
    (tmp_path / "pkg/a.txt").unlink()
    (tmp_path / "pkg/a.txt").symlink_to("b.txt")
    report = m.verify_files(tmp_path, manifest, ops=["demo"])
    assert report.mode_changed == ("pkg/a.txt", "pkg/b.txt") and report.modified == ("pkg/a.txt",)
    with pytest.raises(KeyError, match="nosuch"):
        m.verify_files(tmp_path, manifest, ops=["nosuch"])


def _two_op_manifest() -> m.Manifest:
    def package(root: str, files: dict[str, bytes]) -> m.PackageEntry:
        entries = {f"{root}/{name}": m.FileEntry.from_bytes(data, "100644")
                   for name, data in files.items()}
        return m.PackageEntry(f"flashinfer/{root}", root, "0" * 40, "tree", "source", entries)

    def op(*packages: m.PackageEntry) -> m.OpEntry:
        return m.OpEntry("abc", "1" * 40, "2" * 40, "0.1.0", "custom", None, packages)

    return m.Manifest(m.UpstreamInfo("flashinfer", None, "sha1"), {
        "one": op(package("one", {"a.txt": b"a", "sub/b.txt": b"b"})),
        "two": op(package("two", {"c.txt": b"c"}), package("one-more", {"d.txt": b"d"})),
    })


def _write_two_op_files(root: Path, manifest: m.Manifest) -> None:
    """Each file of ``_two_op_manifest`` under ``root``, as recorded (its name's first letter)."""
    for rel in manifest.files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rel.rsplit("/", 1)[1][0].encode())


def test_narrowed_reports_equal_per_op_verification(tmp_path):
    manifest = _two_op_manifest()
    _write_two_op_files(tmp_path, manifest)
    for rel, entry in manifest.files().items():
        assert m.git_blob_id((tmp_path / rel).read_bytes(), "sha1") == entry.blob
    whole = m.verify_files(tmp_path, manifest)
    assert whole.clean and whole.checked == 4
    (tmp_path / "one/a.txt").write_bytes(b"edited")         # modified, op one
    (tmp_path / "one/sub/b.txt").unlink()                   # missing, op one
    (tmp_path / "one/stray.txt").write_bytes(b"x")          # unowned, below one's package
    (tmp_path / "one-more/extra.txt").write_bytes(b"x")     # unowned, below two's package
    (tmp_path / "elsewhere.txt").write_bytes(b"x")          # unowned, below no package
    (tmp_path / "two/c.txt").chmod(0o755)                   # mode, op two
    whole = m.verify_files(tmp_path, manifest)
    assert "elsewhere.txt" in whole.extra
    for names in (["one"], ["two"], ["one", "two"]):
        narrowed = m.narrow_report(manifest, whole, names)
        assert narrowed == m.verify_files(tmp_path, manifest, names), names
        assert not narrowed.clean
    assert m.narrow_report(manifest, whole, ["one"]).extra == ("one/stray.txt",)
    assert m.narrow_report(manifest, whole, ["two"]).extra == ("one-more/extra.txt",)
    with pytest.raises(KeyError, match="nosuch"):
        m.narrow_report(manifest, whole, ["nosuch"])


def test_status_hashes_each_vendored_file_once(tmp_path, monkeypatch):
    from cake_vendor.verify import vendor_status

    manifest = _two_op_manifest()
    _write_two_op_files(tmp_path, manifest)
    (tmp_path / m.MANIFEST_NAME).write_bytes(m.dump_manifest(manifest))
    (tmp_path / "two/c.txt").write_bytes(b"e")  # same size: hashed, then found modified
    hashed: list[bytes] = []
    real = m.git_blob_id

    def counting(data: bytes, object_format: str = "sha1") -> str:
        hashed.append(data)
        return real(data, object_format)

    monkeypatch.setattr(m, "git_blob_id", counting)
    status = vendor_status(tmp_path)
    assert len(hashed) == 4
    assert not status["clean"] and status["ops"]["one"]["clean"]
    assert status["ops"]["two"]["drift"]["modified"] == ["two/c.txt"]
    assert status["ops"]["two"]["files"] == 2


def test_manifest_module_needs_no_gitpython():
    code = ("import sys; import miles_ext_kernels.cake.manifest; "
            "assert 'git' not in sys.modules and 'cake_vendor' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("path, problem", [
    ("a/../b", "'..'"), ("/abs", "absolute"), ("a\\b", "backslash"), ("a\0b", "NUL"),
    ("x/.Git/y", ".git"), ("a//b", "''"), ("C:/x", "drive"), ("a/\x01", "control"),
    ("bad\udcff", "UTF-8"),
])
def test_path_problems(path, problem):
    assert problem in path_problem(path)


def test_path_rules_accept_and_map():
    assert path_problem("flashinfer/ünï/файл.txt") is None
    assert vendored_path_for("flashinfer/cake_rmsnorm_det_train_backend") == \
        "cake_rmsnorm_det_train_backend"
    assert vendored_path_for("csrc/cake_rmsnorm_train") == "csrc/cake_rmsnorm_train"
    assert case_collisions(["a/B.cu", "a/b.cu", "c"]) == [("a/B.cu", "a/b.cu")]
    assert case_collisions(["e\u0301.txt", "\u00e9.txt"]) == [("e\u0301.txt", "\u00e9.txt")]
    assert symlink_problem("p/x/l", b"../y", "p", True) is None
    assert "outside" in symlink_problem("p/l", b"../q", "p", True)
    assert "outside" in symlink_problem("p/l", b".", "p", True)


@pytest.mark.parametrize("text, spdx", [
    (b"  Apache License\n  Version 2.0, January 2004\n", "Apache-2.0"),
    (b"Permission is hereby granted, free of\n charge, to any person", "MIT"),
    (b"Redistribution and use in source and binary forms ... 3. Neither the name of",
     "BSD-3-Clause"),
    (b"All rights reserved. Do what you want.", "NOASSERTION"),
])
def test_detect_spdx(text, spdx):
    assert detect_spdx(text) == spdx


def test_layout_warnings_name_every_layout_the_runtime_skips():
    """fi and status warn for exactly the layouts the runtime has no adapter for."""
    for layout in PROFILES["rmsnorm"].layouts:
        warnings = layout_warnings("rmsnorm", layout.name)
        assert bool(warnings) == (layout.name not in SUPPORTED_LAYOUTS), layout.name
    (backend,) = layout_warnings("rmsnorm", "backend-packages")
    assert "no adapter for this upstream layout" in backend and "skips this op" in backend
    (custom,) = layout_warnings("rmsnorm", "custom")
    assert "--package paths match no known layout" in custom and "--op alone" in custom
