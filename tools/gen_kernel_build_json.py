"""Regenerate a first-party kernel package's build.json from its spec.py.

    python tools/gen_kernel_build_json.py                  # every package under kernels/
    python tools/gen_kernel_build_json.py --check          # exit 1 if a build.json is stale
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import click

KERNELS_DIR = Path(__file__).resolve().parents[1] / "miles_ext_kernels" / "kernels"


def load_spec(package_dir: Path) -> ModuleType:
    """Import ``package_dir/spec.py`` by path."""
    path = package_dir / "spec.py"
    spec = importlib.util.spec_from_file_location(f"_kernel_spec_{package_dir.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render_build_json(package_dir: Path) -> bytes:
    """The build.json bytes for ``package_dir``: its spec plus sha256 digests of what it builds.

    Each record's ``source_sha256`` covers its two sources and every header of the package, so
    a header edit changes the digests, the integrity check and the JIT cache key alike.
    """
    description: dict[str, Any] = load_spec(package_dir).build_description()
    headers = description.get("headers", [])
    for record in description["modules"].values():
        files = list(record["sources"]) + list(headers)
        missing = [rel for rel in files if not (package_dir / rel).is_file()]
        if missing:
            raise FileNotFoundError(f"{package_dir.name}: missing {missing}")
        record["source_sha256"] = {rel: _sha256(package_dir / rel) for rel in files}
    text = json.dumps(description, indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    return text.encode("ascii")


def package_dirs() -> list[Path]:
    """Every first-party package directory (one with a spec.py)."""
    return sorted(p.parent for p in KERNELS_DIR.glob("*/spec.py"))


@click.command()
@click.option("--check", is_flag=True, help="Only report stale build.json files (exit 1).")
def main(check: bool) -> None:
    """Write (or check) build.json for every first-party kernel package."""
    stale = []
    for package_dir in package_dirs():
        target = package_dir / "build.json"
        data = render_build_json(package_dir)
        current = target.read_bytes() if target.is_file() else None
        if current == data:
            continue
        stale.append(target)
        if not check:
            target.write_bytes(data)
            click.echo(f"wrote {target}")
    if check and stale:
        for target in stale:
            click.echo(f"stale: {target}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
