"""`fi --op rmsnorm` on a real upstream: flashinfer-python 0.7.2.post1 laid out as a git repo."""

from __future__ import annotations

import ast
import hashlib

import git

from miles_ext_kernels.cake.manifest import load_manifest, verify_files


def _upstream_modules(source: bytes) -> dict:
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(getattr(t, "id", None) == "MODULES" for t in targets):
            return ast.literal_eval(node.value)
    raise AssertionError("upstream jit/cake_rmsnorm_train.py has no MODULES literal")


def test_vendored_blobs_match_upstream_tree_and_table(vendored_rmsnorm, fi_checkout):
    checkout, commit = fi_checkout
    manifest = load_manifest(vendored_rmsnorm)
    op = manifest.ops["rmsnorm"]
    assert op.commit == commit and op.layout == "table-0.7"
    assert op.license.spdx == "Apache-2.0" and op.license.files == ("LICENSE",)

    ls_tree = {}
    for record in git.Repo(checkout).git.ls_tree("-r", "-z", commit).split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, _, sha = meta.split()
            ls_tree[path] = (mode, sha)
    recorded = {}
    for package in op.packages:
        for rel, entry in package.files.items():
            upstream_path = package.upstream_path + rel[len(package.vendored_path):]
            recorded[upstream_path] = (entry.mode, entry.blob)
            data = (vendored_rmsnorm / rel).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry.sha256
    assert recorded == ls_tree  # every upstream file of the layout, blob for blob

    modules = _upstream_modules((vendored_rmsnorm / "jit/cake_rmsnorm_train.py").read_bytes())
    assert len(modules) == 31
    checked = 0
    for record in modules.values():
        for source, digest in record["source_sha256"].items():
            assert hashlib.sha256((vendored_rmsnorm / source).read_bytes()).hexdigest() == digest
            checked += 1
    assert checked >= 42
    assert verify_files(vendored_rmsnorm, manifest).clean


def test_corrupted_copy_is_detected(vendored_rmsnorm_copy):
    manifest = load_manifest(vendored_rmsnorm_copy)
    kernel = next(p for p in manifest.ops["rmsnorm"].files() if p.endswith("_kernel.cu"))
    (vendored_rmsnorm_copy / kernel).write_bytes(b"// corrupted\n")
    assert verify_files(vendored_rmsnorm_copy, manifest).modified == (kernel,)
