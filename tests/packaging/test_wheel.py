"""End to end: the wheel is the product downstream repos receive.

A copy of this repository (tracked + untracked non-ignored files) gets the Cake RMSNorm op
vendored into it by the real tool from the throwaway upstream checkout (``fi_checkout``);
``python -m build`` then makes an sdist and, from that sdist, a wheel. The wheel must carry
every vendored file byte for byte, every first-party kernel source, our license and
upstream's, and nothing from ``tests/``. It is installed (not editable) into a fresh virtual
environment that sees torch / tvm-ffi / click / filelock from the system, and used from a
directory outside any source tree: ``verify``, ``info``, a CPU forward/backward through the
public API, a compile-only build of one module, then a corrupted vendored file that ``verify``
and the build must both refuse.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
DIST = "miles_ext_kernels"
VENDOR_REL = "miles_ext_kernels/cake/_vendor"
KERNELS_REL = "miles_ext_kernels/kernels"
MANIFEST_NAME = "VENDORED.json"
KERNEL_SOURCE_SUFFIXES = (".json", ".cu", ".cuh", ".h", ".hpp")
#: Left in the vendor directory by the tool, never shipped (lock file, staging, byte code).
VENDOR_TOOL_LEFTOVERS = (".vendor.lock", ".vendor-txn", "__pycache__")
COMPILE_ARCH = "sm_100a"
MIN_SETUPTOOLS_FOR_PEP639 = 77

pytestmark = pytest.mark.slow


# ----------------------------------------------------------------------------- helpers


def git_blob_id(data: bytes) -> str:
    """Git blob id (sha1 object format) of raw bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def repo_files(repo: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files of ``repo`` that exist on disk."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode()
    names = sorted({n for n in out.split("\0") if n})
    return [n for n in names if (repo / n).is_file() and not (repo / n).is_symlink()]


def copy_repo(repo: Path, dest: Path) -> Path:
    """Copy the working tree files of ``repo`` (as git sees them) into ``dest``.

    Anything already vendored in the working tree (a developer's local run of the tool) is
    left out: the tests vendor their own fixture op.
    """
    for rel in repo_files(repo):
        if rel.startswith(VENDOR_REL + "/"):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)
    return dest


def isolated_env(**extra: str) -> dict[str, str]:
    """The environment minus anything that could point Python at the source tree."""
    env = {
        k: v for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
        and not k.startswith("MILES_EXT_KERNELS_")
    }
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
        expect: int | None = 0, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``cmd``; when ``expect`` is not None, fail with its output unless it exits so."""
    proc = subprocess.run(cmd, cwd=cwd, env=env if env is not None else isolated_env(),
                          capture_output=True, text=True, timeout=timeout)
    if expect is not None and proc.returncode != expect:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {proc.returncode}, expected {expect}\n"
                    f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc


def vendor_disk_files(vendor_dir: Path) -> set[str]:
    """Vendor-relative paths of the files under ``vendor_dir`` that belong in a distribution."""
    found = set()
    for path in vendor_dir.rglob("*"):
        rel = path.relative_to(vendor_dir)
        if path.is_file() and not any(p in VENDOR_TOOL_LEFTOVERS for p in rel.parts):
            found.add(rel.as_posix())
    return found


def manifest_files(manifest: dict) -> dict[str, dict]:
    """Every vendored file entry of VENDORED.json keyed by vendor-relative path."""
    files: dict[str, dict] = {}
    for op in manifest["ops"].values():
        for package in op["packages"]:
            files.update(package["files"])
    return files


def setuptools_major() -> int:
    """Major version of the setuptools importable here (0 when absent)."""
    try:
        return int(metadata.version("setuptools").split(".")[0])
    except metadata.PackageNotFoundError:
        return 0


def build_command(outdir: Path) -> list[str]:
    """``python -m build``: offline with this interpreter's setuptools when it is new enough
    for PEP 639 (the only build requirement), else in an isolated env (fetches setuptools)."""
    cmd = [sys.executable, "-m", "build", "--outdir", str(outdir)]
    if setuptools_major() >= MIN_SETUPTOOLS_FOR_PEP639:
        cmd += ["--no-isolation", "--skip-dependency-check"]
    return cmd


# ----------------------------------------------------------------------------- fixtures


@dataclass(frozen=True)
class Vendored:
    """The repository copy with the fixture op vendored into it."""

    root: Path
    manifest: dict
    commit: str

    @property
    def vendor_dir(self) -> Path:
        """The copy's vendor directory."""
        return self.root / VENDOR_REL


@dataclass(frozen=True)
class Dists:
    """The sdist and the wheel built from it."""

    sdist: Path
    wheel: Path


@dataclass(frozen=True)
class Installed:
    """A fresh virtual environment holding the wheel, and a work dir outside any source tree."""

    python: Path
    package_dir: Path
    workdir: Path

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for running the venv's Python (JIT cache inside the work dir)."""
        settings = {"MILES_EXT_KERNELS_CACHE": str(self.workdir / "jit-cache"), **extra}
        return isolated_env(**settings)

    def cake(self, *args: str, expect: int | None = 0, **env: str) -> subprocess.CompletedProcess:
        """Run ``python -m miles_ext_kernels.cake ARGS`` with the installed copy."""
        return run([str(self.python), "-m", "miles_ext_kernels.cake", *args],
                   cwd=self.workdir, env=self.env(**env), expect=expect)

    def python_json(self, code: str) -> dict:
        """Run ``code`` with the venv's Python; it prints one JSON object, returned parsed."""
        proc = run([str(self.python), "-c", code], cwd=self.workdir, env=self.env())
        return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def vendored(tmp_path_factory: pytest.TempPathFactory, fi_checkout) -> Vendored:
    """Copy the repository and vendor the rmsnorm op into the copy with the real tool."""
    checkout, commit = fi_checkout
    root = copy_repo(REPO, tmp_path_factory.mktemp("pkg") / "src")
    run([sys.executable, "tools/vendor_cake.py", "fi", "--root", str(root),
         "--checkout", str(checkout), "--commit", commit, "--op", "rmsnorm"],
        cwd=root, env=isolated_env())
    manifest = json.loads((root / VENDOR_REL / MANIFEST_NAME).read_bytes())
    return Vendored(root=root, manifest=manifest, commit=commit)


@pytest.fixture(scope="module")
def dists(vendored: Vendored, tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """``python -m build``: the sdist, then the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    run([*build_command(out), str(vendored.root)], cwd=vendored.root)
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in out.iterdir())
    return Dists(sdist=sdists[0], wheel=wheels[0])


@pytest.fixture(scope="module")
def installed(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel installed non-editable into a fresh venv using the system's torch & co."""
    base = tmp_path_factory.mktemp("venv")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        cwd=base)
    python = venv / "bin" / "python"
    # This interpreter's pip installs into the venv (pip >= 22.3 --python): no ensurepip run.
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--no-cache-dir", "--disable-pip-version-check", "-q", str(dists.wheel)],
        cwd=base)
    workdir = base / "elsewhere"
    workdir.mkdir()
    where = json.loads(run(
        [str(python), "-c",
         "import json, miles_ext_kernels as m; print(json.dumps(m.__file__))"],
        cwd=workdir, env=isolated_env()).stdout)
    package_dir = Path(where).resolve().parent
    assert package_dir.is_relative_to(venv.resolve()), f"imported {where}, not the wheel"
    return Installed(python=python, package_dir=package_dir, workdir=workdir)


@pytest.fixture(scope="module")
def one_module(installed: Installed) -> dict:
    """One vendored module buildable for COMPILE_ARCH: its name and first source, installed."""
    return installed.python_json(
        "import json\n"
        "from miles_ext_kernels.cake.packages import discover_packages\n"
        "pkg = discover_packages(include_first_party=False)[0]\n"
        f"rec = next(r for _, r in sorted(pkg.modules.items()) if {COMPILE_ARCH!r} in r.arches)\n"
        "print(json.dumps({'name': rec.name, 'source': str(pkg.source_root / rec.sources[0]),\n"
        f"    'cache_name': rec.cache_names[{COMPILE_ARCH!r}]}}))\n"
    )


def wheel_members(wheel: Path) -> dict[str, zipfile.ZipInfo]:
    """The wheel's members by name."""
    with zipfile.ZipFile(wheel) as archive:
        return {info.filename: info for info in archive.infolist()}


def wheel_read(wheel: Path, name: str) -> bytes:
    """One member's bytes."""
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name)


def wheel_metadata(wheel: Path) -> email.message.Message:
    """The wheel's METADATA as a parsed message."""
    name = next(n for n in wheel_members(wheel) if n.endswith(".dist-info/METADATA"))
    return email.parser.BytesParser().parsebytes(wheel_read(wheel, name))


def require_nvcc() -> None:
    """Skip (visibly) when no CUDA compiler is installed: the compile steps need one."""
    homes = [os.environ.get(k) for k in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    if shutil.which("nvcc") is None and not any(
            h and (Path(h) / "bin" / "nvcc").exists() for h in homes):
        pytest.skip("nvcc not found: the compile-only build needs the CUDA toolkit")


# ----------------------------------------------------------------------------- the wheel


def test_wheel_carries_every_vendored_file_byte_for_byte(vendored: Vendored, dists: Dists):
    members = wheel_members(dists.wheel)
    recorded = manifest_files(vendored.manifest)
    assert any(p.endswith("_kernel.cu") for p in recorded), "fixture op vendored no kernels"
    for rel, entry in recorded.items():
        name = f"{VENDOR_REL}/{rel}"
        assert name in members, f"{name} (listed in VENDORED.json) is missing from the wheel"
        data = wheel_read(dists.wheel, name)
        assert git_blob_id(data) == entry["blob"], f"{name}: git blob id differs"
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{name}: sha256 differs"
        executable = bool((members[name].external_attr >> 16) & stat.S_IXUSR)
        assert executable == (entry["mode"] == "100755"), f"{name}: exec bit vs {entry['mode']}"
    manifest_member = f"{VENDOR_REL}/{MANIFEST_NAME}"
    assert wheel_read(dists.wheel, manifest_member) == (
        vendored.vendor_dir / MANIFEST_NAME).read_bytes()
    shipped = {n[len(VENDOR_REL) + 1:] for n in members if n.startswith(VENDOR_REL + "/")}
    assert shipped == vendor_disk_files(vendored.vendor_dir)


def test_wheel_carries_first_party_kernel_sources(vendored: Vendored, dists: Dists):
    members = wheel_members(dists.wheel)
    sources = sorted(p for p in (vendored.root / KERNELS_REL).rglob("*")
                     if p.is_file() and p.suffix in KERNEL_SOURCE_SUFFIXES)
    assert any(p.name == "build.json" for p in sources), "no first-party build.json in the repo"
    for path in sources:
        name = path.relative_to(vendored.root).as_posix()
        assert name in members, f"{name} is missing from the wheel"
        assert wheel_read(dists.wheel, name) == path.read_bytes(), f"{name} differs"


def test_distributions_hold_no_tests_tooling_or_caches(vendored: Vendored, dists: Dists):
    for name in wheel_members(dists.wheel):
        top = name.split("/", 1)[0]
        assert top == DIST or top.endswith(".dist-info"), f"wheel carries {name}"
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
        assert not any(part in VENDOR_TOOL_LEFTOVERS for part in name.split("/")), name
    with tarfile.open(dists.sdist) as archive:
        names = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    for forbidden in ("tests/", "tools/", "benchmarks/", ".ci/"):
        assert not any(n.startswith(forbidden) for n in names), f"sdist carries {forbidden}"
    for needed in ("LICENSE", "NOTICE", "pyproject.toml", "setup.py",
                   f"{VENDOR_REL}/{MANIFEST_NAME}"):
        assert needed in names, f"sdist lacks {needed}"


def test_license_metadata_lists_ours_and_upstreams(vendored: Vendored, dists: Dists,
                                                   fi_files: dict[str, bytes]):
    meta = wheel_metadata(dists.wheel)
    listed = meta.get_all("License-File") or []
    expression = meta.get("License-Expression") or ""
    assert "Apache-2.0" in expression
    assert "LICENSE" in listed and "NOTICE" in listed
    dist_info = next(n for n in wheel_members(dists.wheel) if n.endswith(".dist-info/METADATA"))
    licenses_dir = dist_info.rsplit("/", 1)[0] + "/licenses/"
    assert wheel_read(dists.wheel, licenses_dir + "LICENSE") == (REPO / "LICENSE").read_bytes()
    ops = vendored.manifest["ops"]
    assert ops, "nothing vendored"
    for op_name, op in ops.items():
        license_entry = op["license"]
        assert license_entry is not None, f"op {op_name} recorded no license"
        assert license_entry["spdx"] == "Apache-2.0"  # FlashInfer's license
        assert license_entry["spdx"] in expression
        assert license_entry["files"], f"op {op_name} vendored no license file"
        for rel in license_entry["files"]:
            path = f"{VENDOR_REL}/{rel}"
            assert path in listed, f"{path} not in License-File {listed}"
            data = wheel_read(dists.wheel, licenses_dir + path)
            assert data == (vendored.vendor_dir / rel).read_bytes()
    assert wheel_read(dists.wheel, f"{licenses_dir}{VENDOR_REL}/LICENSE") == fi_files["LICENSE"]


def test_clean_checkout_builds_a_wheel_without_vendored_files(tmp_path: Path):
    root = copy_repo(REPO, tmp_path / "src")
    out = tmp_path / "dist"
    proc = run([*build_command(out), "--wheel", str(root)], cwd=root)
    assert "did not match any files" not in proc.stdout + proc.stderr
    (wheel,) = out.glob("*.whl")
    assert not any(n.startswith(VENDOR_REL + "/") for n in wheel_members(wheel))
    assert wheel_metadata(wheel).get_all("License-File") == ["LICENSE", "NOTICE"]


# ----------------------------------------------------------------------------- installed


def test_installed_copy_reports_version_and_vendored_commit(installed: Installed,
                                                            vendored: Vendored):
    facts = installed.python_json(
        "import json, importlib.metadata as md, miles_ext_kernels as m\n"
        "from miles_ext_kernels.cake import vendored_ops\n"
        "print(json.dumps({'version': m.__version__, 'dist': md.version('miles-ext-kernels'),\n"
        "                  'ops': vendored_ops()}, default=str))\n"
    )
    assert facts["version"] == facts["dist"]
    assert vendored.commit in json.dumps(facts["ops"]), facts["ops"]
    proc = installed.cake("verify")
    assert "clean" in proc.stdout
    info = json.loads(installed.cake("info", "--json").stdout)
    assert info["version"] == facts["version"]
    op = info["vendored"]["ops"]["rmsnorm"]
    assert op["commit"] == vendored.commit
    assert op["files"] == len(manifest_files(vendored.manifest))
    assert Path(info["vendored"]["vendor_dir"]).resolve() == (
        installed.package_dir / "cake" / "_vendor").resolve()
    assert info["first_party"], "no first-party package found in the installed copy"
    assert "version" in info["tvm_ffi"], info["tvm_ffi"]
    text = installed.cake("info").stdout
    assert vendored.commit in text and facts["version"] in text


def test_installed_copy_runs_cpu_forward_backward(installed: Installed):
    out = installed.workdir / "fwd_bwd.pt"
    run([str(installed.python), "-c",
         "import sys, torch\n"
         "from miles_ext_kernels.cake import rmsnorm_forward, rmsnorm_backward\n"
         "gen = torch.Generator().manual_seed(0)\n"
         "x = torch.randn(37, 512, generator=gen).bfloat16()\n"
         "w = (1 + 0.1 * torch.randn(512, generator=gen)).bfloat16()\n"
         "g = torch.randn(37, 512, generator=gen).bfloat16()\n"
         "y, rstd = rmsnorm_forward(x, w, 1e-6, backend='reference')\n"
         "dx, dw = rmsnorm_backward(g, x, w, rstd, backend='reference')\n"
         "torch.save(dict(x=x, w=w, g=g, y=y, rstd=rstd, dx=dx, dw=dw), sys.argv[1])\n",
         str(out)], cwd=installed.workdir, env=installed.env())
    t = torch.load(out)
    x, w, g = (t[k].double() for k in ("x", "w", "g"))
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    y = x * rstd * w
    dw = (g * x * rstd).sum(0)
    gw = g * w
    dx = rstd * (gw - x * rstd.pow(2) * (gw * x).mean(-1, keepdim=True))
    assert t["y"].dtype == torch.bfloat16 and t["dw"].dtype == torch.float32
    torch.testing.assert_close(t["rstd"].double(), rstd.squeeze(-1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(t["y"].double(), y, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(t["dx"].double(), dx, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(t["dw"].double(), dw, rtol=1e-4, atol=1e-4)


def test_installed_copy_builds_one_module(installed: Installed, one_module: dict):
    require_nvcc()
    cache = installed.workdir / "build-cache"
    proc = installed.cake("build", "--arch", COMPILE_ARCH, "--module", one_module["name"],
                          MILES_EXT_KERNELS_CACHE=str(cache))
    assert "1 ok, 0 failed" in proc.stdout, proc.stdout
    built = [p for p in cache.rglob("*.so") if one_module["cache_name"] in str(p)]
    assert built, f"no {one_module['cache_name']} shared object under {cache}"


def test_corrupted_installed_file_is_refused(installed: Installed, one_module: dict):
    source = Path(one_module["source"])
    assert source.is_relative_to(installed.package_dir), source
    original = source.read_bytes()
    rel = source.relative_to(installed.package_dir / "cake" / "_vendor").as_posix()
    source.write_bytes(original + b"\n// tampered after install\n")
    try:
        proc = installed.cake("verify", expect=1)
        assert f"modified: {rel}" in proc.stdout, proc.stdout
        require_nvcc()
        cache = installed.workdir / "corrupt-cache"
        proc = installed.cake("build", "--arch", COMPILE_ARCH, "--module", one_module["name"],
                              expect=1, MILES_EXT_KERNELS_CACHE=str(cache))
        output = proc.stdout + proc.stderr
        assert "IntegrityError" in output and source.name in output, output
        assert not list(cache.rglob("*.so")), "a module was built from a corrupted source"
    finally:
        source.write_bytes(original)
    assert "clean" in installed.cake("verify").stdout
