"""Op profiles: which upstream paths make up an op, per upstream layout, plus license files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import VendorError

#: Root files vendored next to every op's packages when upstream has them.
LICENSE_FILES = ("LICENSE", "NOTICE")


@dataclass(frozen=True)
class Layout:
    """One upstream layout of an op: its name (recorded in VENDORED.json) and its paths."""

    name: str
    packages: tuple[str, ...]


@dataclass(frozen=True)
class Profile:
    """An op and its known layouts, newest first."""

    op: str
    layouts: tuple[Layout, ...]


PROFILES: dict[str, Profile] = {
    "rmsnorm": Profile(
        op="rmsnorm",
        layouts=(
            Layout(
                name="backend-packages",
                packages=(
                    "flashinfer/cake_rmsnorm_det_train_backend",
                    "flashinfer/cake_rmsnorm_train_backend",
                ),
            ),
            Layout(
                name="table-0.7",
                packages=(
                    "flashinfer/cake_rmsnorm_train.py",
                    "flashinfer/jit/cake_rmsnorm_train.py",
                    "csrc/cake_rmsnorm_train",
                    "csrc/tvm_ffi_utils.h",
                    "include/flashinfer/layout.cuh",
                ),
            ),
        ),
    ),
}

CUSTOM_LAYOUT = "custom"


def select_layout(op: str, exists: Callable[[str], bool]) -> Layout:
    """The first layout of ``op`` whose every path ``exists`` at the commit; else a clear error."""
    profile = PROFILES.get(op)
    if profile is None:
        raise VendorError(
            f"--op {op!r}: no profile for this op; known ops: {', '.join(sorted(PROFILES))} "
            "(or name the upstream paths with --package)"
        )
    details = []
    for layout in profile.layouts:
        missing = [p for p in layout.packages if not exists(p)]
        if not missing:
            return layout
        details.append(f"layout {layout.name}: missing {', '.join(missing)}")
    raise VendorError(
        f"--op {op!r}: the commit has none of the known layouts of this op", details
    )


def layout_name_for(op: str, packages: tuple[str, ...]) -> str:
    """The profile layout whose paths equal ``packages`` (any order), else ``custom``."""
    profile = PROFILES.get(op)
    if profile is not None:
        for layout in profile.layouts:
            if sorted(layout.packages) == sorted(packages):
                return layout.name
    return CUSTOM_LAYOUT


def layout_warnings(op: str, layout: str) -> list[str]:
    """Warnings about an op vendored with ``layout``: the runtime loads only the layouts it has
    an adapter for (``packages.discovery.SUPPORTED_LAYOUTS``) and skips the others."""
    from miles_ext_kernels.cake.packages.discovery import SUPPORTED_LAYOUTS

    if layout in SUPPORTED_LAYOUTS:
        return []
    loadable = ", ".join(SUPPORTED_LAYOUTS)
    if layout == CUSTOM_LAYOUT:
        profile = PROFILES.get(op)
        known = ", ".join(layout.name for layout in profile.layouts) if profile else "none"
        why = f"its --package paths match no known layout of the op (known: {known})"
        fix = "vendor with --op alone (no --package) for a loadable layout"
    else:
        why = "the runtime has no adapter for this upstream layout yet"
        fix = "its calls go to the first-party package or the reference meanwhile"
    return [
        f"op {op!r} has layout {layout!r}: {why}. The files are kept and verified, but the "
        f"runtime loads only the layouts {loadable} and skips this op with a warning; {fix}"
    ]
