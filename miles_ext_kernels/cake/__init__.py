"""Cake RMSNorm training runtime: vendored and first-party Cake programs behind a PyTorch API.

Public API::

    from miles_ext_kernels.cake import rmsnorm, RMSNorm
    y = rmsnorm(x, w)                          # autograd; dw FP32-accurate, deterministic
    y, h_new = rmsnorm(h, w, residual=u)       # fused residual add
    y, rstd = rmsnorm_forward(x, w, 1e-6)      # functional forward / backward
    dx, dw = rmsnorm_backward(g, x, w, rstd)   # dw is FP32
    print(explain(x, w))                       # which backend / programs would run, and why

Importing this package registers the ``miles_ext_kernels::rmsnorm_*`` custom ops; it does no
nvcc or tvm-ffi work (programs are built on first use).
"""

from __future__ import annotations

import os
from typing import Any

from miles_ext_kernels.cake.autograd import WEIGHT_GRAD_MODES, rmsnorm
from miles_ext_kernels.cake.dispatch import (
    BACKEND_ENV,
    BACKENDS,
    STRICT_ENV,
    DeviceUnavailableError,
    Explanation,
    RMSNormUnsupportedError,
    VendoredPackageError,
    explain,
    is_supported,
)
from miles_ext_kernels.cake.module import RMSNorm
from miles_ext_kernels.cake.ops.rmsnorm import (
    rmsnorm_backward,
    rmsnorm_forward,
    rmsnorm_workspace,
    rmsnorm_workspace_bytes,
)

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "STRICT_ENV",
    "WEIGHT_GRAD_MODES",
    "DeviceUnavailableError",
    "Explanation",
    "RMSNorm",
    "RMSNormUnsupportedError",
    "VendoredPackageError",
    "explain",
    "is_supported",
    "rmsnorm",
    "rmsnorm_backward",
    "rmsnorm_forward",
    "rmsnorm_workspace",
    "rmsnorm_workspace_bytes",
    "vendored_ops",
]


def vendored_ops(vendor_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The vendored ops and their upstream commits (from VENDORED.json), for training logs.

    One dict per op: ``op``, ``upstream``, ``url``, ``ref``, ``commit``, ``tree``, ``layout``,
    ``tool_version``, ``packages`` (upstream paths) and ``files`` (count). Empty when nothing
    is vendored. ``vendor_dir`` defaults to ``manifest.default_vendor_dir()``.
    """
    from miles_ext_kernels.cake.manifest import default_vendor_dir, load_manifest

    directory = default_vendor_dir() if vendor_dir is None else vendor_dir
    manifest = load_manifest(directory)
    if manifest is None:
        return []
    return [
        {
            "op": name,
            "upstream": manifest.upstream.name,
            "url": manifest.upstream.url,
            "ref": entry.ref,
            "commit": entry.commit,
            "tree": entry.tree,
            "layout": entry.layout,
            "tool_version": entry.tool_version,
            "packages": [package.upstream_path for package in entry.packages],
            "files": len(entry.files()),
        }
        for name, entry in sorted(manifest.ops.items())
    ]
