"""Cake packages: module records, one adapter per layout behind ``CakePackage``, discovery."""

from miles_ext_kernels.cake.packages.base import (
    CakePackage,
    CakePackageError,
    UnsupportedLayoutError,
    UnsupportedRouteError,
)
from miles_ext_kernels.cake.packages.build_json import BuildJsonPackage
from miles_ext_kernels.cake.packages.discovery import (
    SUPPORTED_LAYOUTS,
    clear_discovery_cache,
    detect_layout,
    discover_packages,
)
from miles_ext_kernels.cake.packages.records import (
    UPSTREAM_RECORD_KEYS,
    CallSpec,
    ModuleRecord,
    RecordError,
)
from miles_ext_kernels.cake.packages.upstream_table import UpstreamTablePackage

__all__ = [
    "SUPPORTED_LAYOUTS",
    "UPSTREAM_RECORD_KEYS",
    "BuildJsonPackage",
    "CakePackage",
    "CakePackageError",
    "CallSpec",
    "ModuleRecord",
    "RecordError",
    "UnsupportedLayoutError",
    "UnsupportedRouteError",
    "UpstreamTablePackage",
    "clear_discovery_cache",
    "detect_layout",
    "discover_packages",
]
