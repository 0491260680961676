"""Defaults from ``[tool.miles-ext-kernels.vendor]`` in the downstream repo's pyproject.toml."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .errors import VendorError

DEFAULT_CHECKOUT = "../flashinfer"
PACKAGE_SUBDIR = ("miles_ext_kernels", "cake")
VENDOR_SUBDIR = (*PACKAGE_SUBDIR, "_vendor")


@dataclass(frozen=True)
class VendorConfig:
    """Tool defaults of one downstream repository."""

    root: Path
    checkout: Path

    @property
    def vendor_dir(self) -> Path:
        """``<root>/miles_ext_kernels/cake/_vendor``."""
        return self.root.joinpath(*VENDOR_SUBDIR)


def find_root(start: Path) -> Path:
    """The downstream repo root: nearest ancestor of ``start`` with ``miles_ext_kernels/cake``.

    Falls back to this tool's own project root.
    """
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "miles_ext_kernels" / "cake").is_dir():
            return candidate
    return Path(__file__).resolve().parents[2]


def require_checkout_root(root: Path, name: str = "--root") -> Path:
    """``root`` when it is a miles-ext-kernels checkout (holds ``miles_ext_kernels/cake``);
    else a VendorError that calls it ``name`` (the CLI's option, or the API's argument)."""
    root = Path(root)
    if not root.is_dir():
        raise VendorError(f"{name} {str(root)!r}: no such directory")
    if not root.joinpath(*PACKAGE_SUBDIR).is_dir():
        raise VendorError(
            f"{name} {str(root)!r} is not a miles-ext-kernels checkout (it has no "
            f"{'/'.join(PACKAGE_SUBDIR)}); give the root of the repository to vendor into"
        )
    return root


def _check_vendor_dir(vendor_dir: Path) -> None:
    """Refuse a vendor path that exists but is not a directory (the tool never removes it)."""
    if os.path.lexists(vendor_dir) and not vendor_dir.is_dir():
        raise VendorError(
            f"{vendor_dir}: exists but is not a directory; move it away so that the tool can "
            "keep vendored files there"
        )


def load_config(root: Path) -> VendorConfig:
    """Read ``root/pyproject.toml`` (if any); relative paths are relative to ``root``."""
    root = Path(root)
    if not root.is_dir():
        raise VendorError(f"--root {str(root)!r}: no such directory")
    section: dict = {}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise VendorError(f"{pyproject}: not valid TOML ({exc})") from exc
        section = data.get("tool", {}).get("miles-ext-kernels", {}).get("vendor", {})
        if not isinstance(section, dict):
            raise VendorError(f"{pyproject}: [tool.miles-ext-kernels.vendor] must be a table")
    checkout = section.get("checkout", DEFAULT_CHECKOUT)
    if not isinstance(checkout, str) or not checkout:
        raise VendorError(f"{pyproject}: [tool.miles-ext-kernels.vendor] checkout must be a path")
    config = VendorConfig(root=root, checkout=(root / checkout))
    _check_vendor_dir(config.vendor_dir)
    return config
