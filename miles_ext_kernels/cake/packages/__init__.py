"""Cake packages: module records, one adapter per layout behind ``CakePackage``, discovery."""

from miles_ext_kernels.cake.packages.base import (
    CakePackage,
    CakePackageError,
    UnsupportedLayoutError,
    UnsupportedRouteError,
    VendoredPackageError,
)
from miles_ext_kernels.cake.packages.build_json import BuildJsonPackage
from miles_ext_kernels.cake.packages.discovery import (
    SUPPORTED_LAYOUTS,
    Discovery,
    VendoredProblem,
    clear_discovery_cache,
    detect_layout,
    discover,
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
    "Discovery",
    "ModuleRecord",
    "RecordError",
    "UnsupportedLayoutError",
    "UnsupportedRouteError",
    "UpstreamTablePackage",
    "VendoredPackageError",
    "VendoredProblem",
    "clear_discovery_cache",
    "detect_layout",
    "discover",
    "discover_packages",
]
