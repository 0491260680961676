"""JIT for Cake programs: nvcc toolchain, flags, build, cache + locks, tvm-ffi loading, launch."""

from .build import BuildError, BuildSpec, build_shared_object
from .cache import CACHE_ENV, cache_root
from .flags import FlagError, gencode_flag, module_nvcc_flags
from .launch import (
    BindingError,
    bind_arguments,
    binding_plan,
    call_entries,
    prepare_module,
    run_module,
)
from .loader import BuildOutcome, EntryError, ensure_built, load_module, resolve_entry
from .toolchain import Toolchain, ToolchainError, probe_toolchain

__all__ = [
    "CACHE_ENV",
    "BindingError",
    "BuildError",
    "BuildOutcome",
    "BuildSpec",
    "EntryError",
    "FlagError",
    "Toolchain",
    "ToolchainError",
    "bind_arguments",
    "binding_plan",
    "build_shared_object",
    "call_entries",
    "cache_root",
    "ensure_built",
    "gencode_flag",
    "load_module",
    "module_nvcc_flags",
    "prepare_module",
    "probe_toolchain",
    "resolve_entry",
    "run_module",
]
