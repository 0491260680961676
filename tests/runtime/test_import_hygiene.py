"""The runtime's package, routing and integrity code never imports flashinfer or GitPython."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent("""
    import sys

    class Forbid:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("flashinfer", "git"):
                raise ImportError(f"forbidden import of {name!r}")
            return None

    sys.meta_path.insert(0, Forbid())
    from miles_ext_kernels.cake import integrity, routing
    from miles_ext_kernels.cake.packages import discover_packages

    (package,) = discover_packages(sys.argv[1], include_first_party=False)
    name = "cake_rmsnorm_train_01036297dc6e647b9e56"
    record = package.modules[name]
    assert len(integrity.verify_module_sources(package, record)) == 2
    assert routing.launch_grid(record, 5, sm_count=148) == (5, 1, 1)
    assert [r.name for r in package.select_modules("sm_100a", 512, "bwd", False, 9)] == [name]
    try:
        import git  # noqa: F401
    except ImportError as exc:
        assert "forbidden" in str(exc)
    else:
        raise AssertionError("the import hook is not active")
    bad = sorted(m for m in sys.modules if m.split(".")[0] in ("flashinfer", "git"))
    assert not bad, bad
    print("clean")
""")


def test_packages_routing_integrity_import_neither_flashinfer_nor_git(vendored_rmsnorm):
    vendor = vendored_rmsnorm
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(vendor)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"
