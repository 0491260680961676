"""Bind logical argument values to a module's ``arg_plan`` and launch it on the torch stream.

The per-record binding plan (kernel argument -> logical name or grid axis) is computed once and
memoised, so a call costs one list comprehension over the plan plus the FFI call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from .loader import load_module, resolve_entry

_GRID_AXES = {"grid_x": 0, "grid_y": 1, "grid_z": 2}


class BindingError(ValueError):
    """A record's arg_plan cannot be bound (unknown grid axis, missing logical value)."""


class BindingPlan:
    """Precomputed binding of one record: ``(is_grid, logical name or grid axis)`` per argument."""

    __slots__ = ("module", "slots", "logical_names")

    def __init__(self, record: Any) -> None:
        self.module = str(getattr(record, "name", None) or record.kernel)
        logical = record.logical
        slots: list[tuple[bool, Any]] = []
        for kind, kernel_name in record.arg_plan:
            if kind == "grid":
                if kernel_name not in _GRID_AXES:
                    raise BindingError(
                        f"module {self.module}: grid argument {kernel_name!r} is not one of "
                        f"{tuple(_GRID_AXES)}"
                    )
                slots.append((True, _GRID_AXES[kernel_name]))
            else:
                if kernel_name not in logical:
                    raise BindingError(
                        f"module {self.module}: kernel argument {kernel_name!r} has no logical name"
                    )
                slots.append((False, logical[kernel_name]))
        self.slots: tuple[tuple[bool, Any], ...] = tuple(slots)
        self.logical_names = tuple(name for is_grid, name in slots if not is_grid)

    def bind(self, values: Mapping[str, Any], grid: Sequence[int]) -> list[Any]:
        """Arguments in arg_plan order; ``BindingError`` names the first missing logical value."""
        try:
            return [grid[ref] if is_grid else values[ref] for is_grid, ref in self.slots]
        except KeyError:
            missing = [name for name in self.logical_names if name not in values]
            raise BindingError(
                f"module {self.module} needs the logical value(s) {missing}; got {sorted(values)}"
            ) from None
        except IndexError:
            raise BindingError(
                f"module {self.module}: grid must have 3 entries (x, y, z), got {tuple(grid)!r}"
            ) from None


_PLANS: dict[int, tuple[Any, BindingPlan]] = {}
_PLANS_LOCK = threading.Lock()


def binding_plan(record: Any) -> BindingPlan:
    """The memoised binding plan of ``record``."""
    cached = _PLANS.get(id(record))
    if cached is not None and cached[0] is record:
        return cached[1]
    plan = BindingPlan(record)
    with _PLANS_LOCK:
        _PLANS[id(record)] = (record, plan)
    return plan


def bind_arguments(record: Any, values: Mapping[str, Any], grid: Sequence[int]) -> list[Any]:
    """Arguments of ``record``'s entry in ``arg_plan`` order, looked up by logical name."""
    return binding_plan(record).bind(values, grid)


_ENTRIES: dict[tuple[int, str], tuple[Any, Any]] = {}


def _entry_for(package: Any, record: Any, arch: str) -> Any:
    key = (id(record), arch)
    cached = _ENTRIES.get(key)
    if cached is not None and cached[0] is record:
        return cached[1]
    entry = resolve_entry(load_module(package, record, arch), record)
    _ENTRIES[key] = (record, entry)
    return entry


def prepare_module(
    package: Any,
    record: Any,
    values: Mapping[str, Any],
    *,
    rows: int,
    arch: str,
    sm_count: int,
    grid: Sequence[int] | None = None,
) -> tuple[Any, list[Any]]:
    """``(entry, arguments)`` of ``record`` (built for ``arch``) for one call.

    The grid follows ``routing.launch_grid`` for ``rows`` and ``sm_count`` unless ``grid``
    overrides it (a test hook to force the CTA count). Loads (and builds) the module on first
    use.
    """
    if grid is None:
        from miles_ext_kernels.cake import routing

        hidden = values.get("hidden")
        n_chunks = values.get("n_chunks")
        grid = routing.launch_grid(record, rows, sm_count=sm_count, hidden=hidden,
                                   n_chunks=n_chunks)
    args = bind_arguments(record, values, grid)
    return _entry_for(package, record, arch), args


def call_entries(calls: Sequence[tuple[Any, Sequence[Any]]], device: int | None, *,
                 detach: bool = True) -> None:
    """Call each ``entry(*args)`` in order on the current torch stream of CUDA ``device``.

    Tensors that require grad (autograd.Function inputs, saved tensors) cannot take DLPack's
    fast path; the kernels only read and write their storage, so they are passed detached
    (``detach=False``: the caller already did).
    """
    import tvm_ffi

    if detach:
        calls = [(entry, [a.detach() if getattr(a, "requires_grad", False) else a
                          for a in args]) for entry, args in calls]
    set_stream = getattr(getattr(tvm_ffi, "core", None), "_env_set_current_stream", None)
    if set_stream is None or device is None:
        with tvm_ffi.use_torch_stream():
            for entry, args in calls:
                entry(*args)
        return
    # What tvm_ffi.use_torch_stream() does, without building torch Stream objects per call.
    import torch

    previous = set_stream(_DL_CUDA, device, torch._C._cuda_getCurrentRawStream(device))
    try:
        for entry, args in calls:
            entry(*args)
    finally:
        set_stream(_DL_CUDA, device, previous)


def run_module(
    package: Any,
    record: Any,
    values: Mapping[str, Any],
    *,
    rows: int,
    arch: str,
    sm_count: int,
    grid: Sequence[int] | None = None,
) -> None:
    """Launch ``record`` (built for ``arch``) on the current torch stream.

    The grid follows ``routing.launch_grid`` for ``rows`` and ``sm_count`` unless ``grid``
    overrides it (a test hook to force the CTA count). Needs a CUDA build of torch.
    """
    entry, args = prepare_module(package, record, values, rows=rows, arch=arch,
                                 sm_count=sm_count, grid=grid)
    call_entries([(entry, args)], device_index(values))


_DL_CUDA = 2  # DLDeviceType kDLCUDA


def device_index(values: Mapping[str, Any]) -> int | None:
    """CUDA device index of the call's first tensor (``x`` or ``g``), else None."""
    for name in ("x", "g"):
        tensor = values.get(name)
        device = getattr(tensor, "device", None)
        if device is not None and device.type == "cuda":
            if device.index is not None:
                return device.index
            import torch

            return torch.cuda.current_device()
    return None
