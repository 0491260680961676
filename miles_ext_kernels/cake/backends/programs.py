"""Run Cake programs (vendored upstream or first-party) for one RMSNorm call.

The dispatcher has already chosen the package, arch and modules (``dispatch.Decision``). This
module makes the tensors the programs can read (layout and alignment rules below), builds the
logical ``values`` dict every record binds from, sizes and views the backward workspace and
launches the selected modules on the current torch stream through ``jit.run_module``.

Layout rules: the feature dim must be contiguous (else one copy). Upstream programs read a
row-strided input in place when its base and row stride are 32-byte (forward) / 16-byte
(backward) aligned; first-party programs need 16-byte alignment and a row stride that is a
multiple of 8 elements. A legal but misaligned layout is copied once. Outputs are contiguous.

Binding rules without a residual (upstream's): ``u := x``, ``h_new := y``, ``u_stride := 0``,
``g_h := g``, ``g_h_stride := g_stride``.
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from miles_ext_kernels.cake import routing
from miles_ext_kernels.cake.backends import launch_plans

__all__ = [
    "FORWARD_ALIGNMENT",
    "BACKWARD_ALIGNMENT",
    "FIRST_PARTY_ALIGNMENT",
    "ROW_STRIDE_MULTIPLE",
    "FLAG_RESIDUAL",
    "FLAG_CAST_BEFORE_WEIGHT_MUL",
    "FLAG_ZERO_CENTERED_GAMMA",
    "FLAG_W_FP32",
    "FLAG_X_FP16",
    "call_flags",
    "kernel_input",
    "as_heads",
    "call_heads",
    "route_takes_heads",
    "workspace_bytes",
    "workspace_views",
    "aligned_zeros",
    "cached_workspace",
    "clear_workspace_cache",
    "run_forward",
    "run_backward",
]

FORWARD_ALIGNMENT = 32
BACKWARD_ALIGNMENT = 16
FIRST_PARTY_ALIGNMENT = 16
ROW_STRIDE_MULTIPLE = 8
WORKSPACE_ALIGNMENT = routing.WORKSPACE_ALIGNMENT_BYTES

FLAG_RESIDUAL = 1
FLAG_CAST_BEFORE_WEIGHT_MUL = 2
FLAG_ZERO_CENTERED_GAMMA = 4
FLAG_W_FP32 = 8
FLAG_X_FP16 = 16

_PARTIAL_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def call_flags(*, residual: bool, cast_before_weight_mul: bool, zero_centered_gamma: bool,
               w_dtype: torch.dtype, x_dtype: torch.dtype) -> int:
    """The ``flags`` scalar of first-party programs."""
    flags = FLAG_RESIDUAL if residual else 0
    flags |= FLAG_CAST_BEFORE_WEIGHT_MUL if cast_before_weight_mul else 0
    flags |= FLAG_ZERO_CENTERED_GAMMA if zero_centered_gamma else 0
    flags |= FLAG_W_FP32 if w_dtype == torch.float32 else 0
    flags |= FLAG_X_FP16 if x_dtype == torch.float16 else 0
    return flags


def _alignment(origin: str, kind: str) -> int:
    if origin == "vendored":
        return FORWARD_ALIGNMENT if kind == "fwd" else BACKWARD_ALIGNMENT
    return FIRST_PARTY_ALIGNMENT


def _fresh_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy in a fresh (allocator-aligned) buffer."""
    out = torch.empty(tensor.shape, dtype=tensor.dtype, device=tensor.device)
    out.copy_(tensor)
    return out


def route_takes_heads(route: Any) -> bool:
    """Whether every program of the route reads per-head row views (logical ``heads``)."""
    return all("heads" in record.logical.values() for record in route.modules)


def call_heads(route: Any, *views: torch.Tensor | None) -> int:
    """The head count programs will address rows with (1 unless a ``[T, heads, H]`` view)."""
    if not route_takes_heads(route):
        return 1
    for view in views:
        if view is not None and view.dim() == 3:
            return int(view.shape[1])
    return 1


def as_heads(tensor: torch.Tensor, heads: int) -> torch.Tensor:
    """A 2-D ``[rows, H]`` or 3-D ``[T, heads', H]`` row view as ``[rows / heads, heads, H]``.

    Splitting the rows of a 2-D view is always a view; merging a per-head view into plain rows
    (programs without head strides) may copy.
    """
    hidden = tensor.shape[-1]
    if tensor.dim() == 3 and tensor.shape[1] == heads:
        return tensor
    flat = tensor.reshape(-1, hidden)
    return flat.view(-1, heads, hidden)


def kernel_input(tensor: torch.Tensor, alignment: int) -> tuple[torch.Tensor, int, int]:
    """``(tensor, row_stride, head_stride)`` of a ``[T, heads, H]`` input as programs read it.

    Read in place when the feature dim is contiguous, the base address is ``alignment``-byte
    aligned and both strides are multiples of 8 elements and of ``alignment`` bytes (strides of
    size-1 dims are never dereferenced and take their canonical values; a zero stride, an
    expanded gradient, is legal). Any other layout is copied once into a fresh buffer.
    """
    rows, heads, hidden = tensor.shape
    canonical_row, canonical_head = heads * hidden, (hidden if heads > 1 else 0)
    if hidden > 1 and tensor.stride(2) != 1:
        return _fresh_copy(tensor), canonical_row, canonical_head
    row_stride = tensor.stride(0) if rows > 1 else canonical_row
    head_stride = tensor.stride(1) if heads > 1 else canonical_head
    size = tensor.element_size()
    aligned = tensor.data_ptr() % alignment == 0 and all(
        stride % ROW_STRIDE_MULTIPLE == 0 and (stride * size) % alignment == 0
        for stride in (row_stride, head_stride))
    if aligned:
        return tensor, row_stride, head_stride
    return _fresh_copy(tensor), canonical_row, canonical_head


def _small_input(tensor: torch.Tensor, alignment: int) -> torch.Tensor:
    """A 1-D input (``w``, ``rstd``): contiguous and aligned in place, else a copy."""
    if tensor.is_contiguous() and tensor.data_ptr() % alignment == 0:
        return tensor
    return _fresh_copy(tensor)


def _output(buffer: torch.Tensor | None, shape: tuple[int, ...], dtype: torch.dtype,
            device: torch.device, alignment: int) -> torch.Tensor:
    """The caller's buffer when contiguous and aligned, else a fresh one (copied back later)."""
    if (buffer is not None and buffer.is_contiguous()
            and buffer.data_ptr() % alignment == 0):
        return buffer
    return torch.empty(shape, dtype=dtype, device=device)


def _launch(decision: Any, values: dict[str, Any], rows: int,
            grids: dict[str, tuple[int, int, int]] | None = None,
            capture: launch_plans.Capture | None = None) -> None:
    """Launch the route's modules; with ``capture``, also record each entry and its arguments
    (for a launch plan)."""
    from miles_ext_kernels.cake import jit
    from miles_ext_kernels.cake.jit import launch

    route = decision.route
    sm_count = int(decision.device.sm_count)
    if capture is None:
        for record in route.modules:
            grid = grids.get(record.name) if grids else None
            jit.run_module(route.package, record, values, rows=rows, arch=route.arch,
                           sm_count=sm_count, grid=grid)
        return
    calls = []
    for record in route.modules:
        grid = grids.get(record.name) if grids else None
        calls.append(launch.prepare_module(route.package, record, values, rows=rows,
                                           arch=route.arch, sm_count=sm_count, grid=grid))
    launch.call_entries(calls, launch.device_index(values))
    capture.steps.extend(calls)


def _kernel_view(tensor: torch.Tensor, heads: int, origin: str) -> torch.Tensor:
    """What a program receives: the ``[T, heads, H]`` view (first-party) or ``[rows, H]``."""
    if origin == "vendored":
        return tensor.reshape(-1, tensor.shape[-1]) if heads == 1 else tensor
    return tensor


def _prepare(tensor: torch.Tensor, heads: int, align: int,
             origin: str) -> tuple[torch.Tensor, int, int]:
    view, row_stride, head_stride = kernel_input(as_heads(tensor, heads), align)
    return _kernel_view(view, heads, origin), row_stride, head_stride


def run_forward(
    decision: Any,
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float,
    *,
    residual: torch.Tensor | None,
    zero_centered_gamma: bool,
    cast_before_weight_mul: bool,
    y: torch.Tensor | None = None,
    capture: launch_plans.Capture | None = None,
) -> tuple[torch.Tensor, ...]:
    """Forward with the decision's programs: ``(y, rstd[, h_new])`` as ``[rows, H]``.

    ``x`` / ``residual`` are ``[rows, H]`` or per-head ``[T, heads, H]`` row views with a
    contiguous feature dim. ``y`` is an optional contiguous ``[rows, H]`` output buffer; the
    returned ``y`` is a fresh tensor when it is misaligned (the caller copies back).
    ``capture`` records what a launch plan needs (inputs ``x``, ``u``, ``w``; outputs ``y``,
    ``r``, ``h_new``).
    """
    route = decision.route
    origin = route.origin
    hidden = x.shape[-1]
    rows = x.numel() // hidden
    align = _alignment(origin, "fwd")
    device = x.device
    heads = call_heads(route, x, residual)
    x_in, x_stride, x_head_stride = _prepare(x, heads, align, origin)
    if residual is not None:
        u_in, u_stride, u_head_stride = _prepare(residual, heads, align, origin)
    w = _small_input(w, BACKWARD_ALIGNMENT)
    y_out = _output(y, (rows, hidden), x.dtype, device, align)
    rstd = torch.empty(rows, dtype=torch.float32, device=device)
    h_new = (torch.empty((rows, hidden), dtype=x.dtype, device=device)
             if residual is not None else None)
    values: dict[str, Any] = {
        "x": x_in,
        "w": w,
        "y": y_out,
        "r": rstd,
        "rows": rows,
        "hidden": hidden,
        "heads": heads,
        "eps": float(eps),
        "x_stride": x_stride,
        "x_head_stride": x_head_stride,
        "y_stride": hidden,
        "h_new_stride": hidden,
        "flags": call_flags(residual=residual is not None,
                            cast_before_weight_mul=cast_before_weight_mul,
                            zero_centered_gamma=zero_centered_gamma, w_dtype=w.dtype,
                            x_dtype=x.dtype),
    }
    if residual is not None:
        values.update(u=u_in, h_new=h_new, u_stride=u_stride, u_head_stride=u_head_stride)
    else:
        # Upstream's binding without a residual: u := x, h_new := y, u_stride := 0.
        values.update(u=x_in, h_new=y_out, u_stride=0, u_head_stride=0)
    if capture is not None:
        capture.inputs.update(x=(x_in, align), w=(w, BACKWARD_ALIGNMENT))
        if residual is not None:
            capture.inputs["u"] = (u_in, align)
        capture.outputs.update(y=(y_out, False), r=(rstd, False))
        if h_new is not None:
            capture.outputs["h_new"] = (h_new, False)
    _launch(decision, values, rows, capture=capture)
    if h_new is not None:
        return y_out, rstd, h_new
    return y_out, rstd


# ----------------------------------------------------------------------------- workspace


def workspace_bytes(decision: Any, hidden: int) -> int:
    """Workspace bytes of the decision's backward route (0 for atomic / no owner)."""
    owner = decision.route.workspace_module if decision.route is not None else None
    if owner is None:
        return 0
    return routing.workspace_bytes(owner, sm_count=int(decision.device.sm_count), hidden=hidden)


def aligned_zeros(nbytes: int, device: torch.device) -> torch.Tensor:
    """A zeroed 1-D uint8 buffer of ``nbytes`` whose base is 256-byte aligned.

    Fresh CUDA allocations already are; elsewhere (CPU) the buffer is carved out of a slightly
    larger allocation.
    """
    if nbytes == 0:
        return torch.zeros(0, dtype=torch.uint8, device=device)
    buffer = torch.zeros(nbytes, dtype=torch.uint8, device=device)
    if buffer.data_ptr() % WORKSPACE_ALIGNMENT == 0:
        return buffer
    buffer = torch.zeros(nbytes + WORKSPACE_ALIGNMENT, dtype=torch.uint8, device=device)
    offset = -buffer.data_ptr() % WORKSPACE_ALIGNMENT
    return buffer[offset: offset + nbytes]


_WORKSPACES: dict[tuple[int, int, int, int], torch.Tensor] = {}
_WORKSPACES_LOCK = threading.Lock()


def cached_workspace(decision: Any, hidden: int,
                     device: torch.device) -> torch.Tensor | None:
    """The zeroed workspace of ``decision`` for the current stream (None when none is needed).

    Allocated once per (device, stream, hidden, bytes) and reused; safe because calls on one
    stream are ordered and the kernels leave the counters zero. None as well while a CUDA graph
    is being captured on a stream with no cached buffer yet: a buffer allocated inside a capture
    is zeroed only when that graph replays, so sharing it would make later graphs and eager
    calls depend on that replay (the caller allocates one for the call alone, see
    :func:`run_backward`).
    """
    if decision.route is None or device.type != "cuda":
        return None
    nbytes = workspace_bytes(decision, hidden)
    if nbytes == 0:
        return None
    index = device.index if device.index is not None else torch.cuda.current_device()
    stream = torch._C._cuda_getCurrentRawStream(index)
    key = (index, int(stream), int(hidden), int(nbytes))
    workspace = _WORKSPACES.get(key)
    if workspace is None:
        if _capturing(index):
            return None
        with _WORKSPACES_LOCK:
            workspace = _WORKSPACES.get(key)
            if workspace is None:
                workspace = _zeros_outside_pools(nbytes, device, index)
                _WORKSPACES[key] = workspace
    return workspace


def _zeros_outside_pools(nbytes: int, device: torch.device, index: int) -> torch.Tensor:
    """:func:`aligned_zeros` allocated and filled by a helper thread on a stream of its own,
    which the current stream then waits for.

    The cached buffer outlives the call, so it must not come from a private memory pool that
    this thread's allocations may be routed to: a torch.compile ``reduce-overhead`` CUDA-graph
    tree runs its warm-up calls so (``_cuda_beginAllocateCurrentThreadToPool``) and refuses a
    live tensor of its pool that is not one of its outputs. Not for use while the current
    stream is capturing.
    """
    current = torch.cuda.current_stream(index)
    made: dict[str, Any] = {}

    def allocate() -> None:
        try:
            with torch.cuda.device(index):
                stream = torch.cuda.Stream(index)
                stream.wait_stream(current)
                with torch.cuda.stream(stream):
                    made["buffer"] = aligned_zeros(nbytes, device)
                    made["done"] = torch.cuda.Event()
                    made["done"].record(stream)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            made["error"] = exc

    worker = threading.Thread(target=allocate, name="miles-ext-kernels-workspace")
    worker.start()
    worker.join()
    if "error" in made:
        raise made["error"]
    current.wait_event(made["done"])
    made["buffer"].record_stream(current)
    return made["buffer"]


def _capturing(index: int) -> bool:
    """Whether the current stream of CUDA device ``index`` is capturing a CUDA graph."""
    with torch.cuda.device(index):
        return torch.cuda.is_current_stream_capturing()


_NO_WORKSPACE: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}


def _no_workspace(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Empty ``(partial, counters)`` views for programs that take a workspace they do not use
    on this call (allocated once per device)."""
    views = _NO_WORKSPACE.get(device)
    if views is None:
        views = (torch.empty(0, dtype=torch.float64, device=device),
                 torch.empty(0, dtype=torch.int32, device=device).view(torch.uint32))
        _NO_WORKSPACE[device] = views
    return views


def clear_workspace_cache() -> None:
    """Drop every cached workspace (e.g. before freeing memory or after a device reset), and
    the launch plans that hold them."""
    with _WORKSPACES_LOCK:
        _WORKSPACES.clear()
        _NO_WORKSPACE.clear()
    launch_plans.clear()


def _check_workspace(workspace: torch.Tensor, needed: int) -> None:
    """What only the program knows: the workspace's alignment and size (its type, dtype,
    shape and device were checked up front by ``ops.rmsnorm``)."""
    if workspace.data_ptr() % WORKSPACE_ALIGNMENT:
        raise ValueError(f"workspace must be {WORKSPACE_ALIGNMENT}-byte aligned "
                         "(rmsnorm_workspace allocates it so)")
    if workspace.numel() < needed:
        raise ValueError(f"workspace holds {workspace.numel()} bytes; this call needs {needed} "
                         "(rmsnorm_workspace_bytes)")


def workspace_views(workspace: torch.Tensor, layout: dict[str, Any],
                    hidden: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(partial [n_chunks, H] FP32|FP64, counters uint32)`` views of a workspace buffer."""
    dtype = _PARTIAL_DTYPES[layout["partial_dtype"]]
    item = torch.empty((), dtype=dtype).element_size()
    n_chunks = int(layout["n_chunks"])
    partial = workspace[: item * n_chunks * hidden].view(dtype).view(n_chunks, hidden)
    begin = int(layout["counters_offset"])
    counters = workspace[begin: begin + 4 * max(int(layout["counters"]), 1)].view(torch.uint32)
    return partial, counters


def _forced_layout(layout: dict[str, Any], owner: Any, rows: int, grid: int) -> dict[str, Any]:
    """Upstream's persistent grid: forcing the grid forces the chunk count too."""
    if owner.workspace_rule["kind"] != "persistent_grid":
        return layout
    n_chunks = min(grid, rows)
    if n_chunks > layout["capacity_chunks"]:
        raise ValueError(f"grid={grid} exceeds the workspace capacity of "
                         f"{layout['capacity_chunks']} chunks")
    forced = dict(layout)
    forced["n_chunks"] = n_chunks
    forced["rows_per_chunk"] = -(-rows // n_chunks)
    return forced


def run_backward(
    decision: Any,
    g: torch.Tensor,
    x: torch.Tensor,
    w: torch.Tensor,
    rstd: torch.Tensor,
    *,
    g_residual: torch.Tensor | None,
    zero_centered_gamma: bool,
    cast_before_weight_mul: bool,
    workspace: torch.Tensor | None = None,
    dx: torch.Tensor | None = None,
    dw: torch.Tensor | None = None,
    grid: int | None = None,
    capture: launch_plans.Capture | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Backward with the decision's programs: ``(dx [rows, H], dw FP32 [H])``.

    ``g`` / ``x`` / ``g_residual`` are ``[rows, H]`` or ``[T, heads, H]`` row views. ``grid``
    forces the CTA count of the workspace-owning program (upstream: also its chunk count).
    ``workspace`` is validated, or allocated (zeroed) when omitted; a call whose selected
    programs do not include the route's workspace owner (the first-party small-batch program)
    needs none. ``capture`` records what a launch plan needs (inputs ``g``, ``x``, ``w``,
    ``r``, ``g_h``; outputs ``dx``, ``dw``).
    """
    route = decision.route
    origin = route.origin
    hidden = x.shape[-1]
    rows = x.numel() // hidden
    device = x.device
    align = _alignment(origin, "bwd")
    heads = call_heads(route, g, x, g_residual)
    x_in, x_stride, x_head_stride = _prepare(x, heads, align, origin)
    g_in, g_stride, g_head_stride = _prepare(g, heads, align, origin)
    if g_residual is not None:
        gh_in, gh_stride, gh_head_stride = _prepare(g_residual, heads, align, origin)
    else:
        # Upstream's binding without a residual: g_h := g.
        gh_in, gh_stride, gh_head_stride = g_in, g_stride, g_head_stride
    w = _small_input(w, BACKWARD_ALIGNMENT)
    rstd = _small_input(rstd, 4)
    dx_out = _output(dx, (rows, hidden), x.dtype, device, align)
    dw_out = _output(dw, (hidden,), torch.float32, device, BACKWARD_ALIGNMENT)
    values: dict[str, Any] = {
        "g": g_in,
        "x": x_in,
        "w": w,
        "r": rstd,
        "dx": dx_out,
        "dw": dw_out,
        "g_h": gh_in,
        "rows": rows,
        "hidden": hidden,
        "heads": heads,
        "g_stride": g_stride,
        "g_head_stride": g_head_stride,
        "x_stride": x_stride,
        "x_head_stride": x_head_stride,
        "g_h_stride": gh_stride,
        "g_h_head_stride": gh_head_stride,
        "dx_stride": hidden,
        "flags": call_flags(residual=g_residual is not None,
                            cast_before_weight_mul=cast_before_weight_mul,
                            zero_centered_gamma=zero_centered_gamma, w_dtype=w.dtype,
                            x_dtype=x.dtype),
    }
    owner = route.workspace_module
    sm_count = int(decision.device.sm_count)
    grids: dict[str, tuple[int, int, int]] = {}
    if owner is None:
        # Atomic (non-deterministic) dw: no workspace; dw accumulates from zero.
        dw_out.zero_()
        if grid is not None:
            grids = {record.name: (grid, 1, 1) for record in route.modules}
    else:
        # The selected programs are the owner, or programs that own their columns (the
        # small-batch backward) and borrow the owner's workspace, all of its partial rows, for
        # the calls their workspace rule names (several clusters); else they get empty views.
        owned = any(record.name == owner.name for record in route.modules)
        borrowed = not owned and any(routing.borrows_workspace(record, rows)
                                     for record in route.modules)
        if not owned and not borrowed:
            partial, counters = _no_workspace(device)
            values.update(partial=partial, counters=counters)
        else:
            layout = routing.workspace_layout(owner, rows, sm_count=sm_count, hidden=hidden)
            if grid is not None and owned:
                layout = _forced_layout(layout, owner, rows, grid)
                grids[owner.name] = (grid, 1, 1)
            if workspace is None:  # the per-(device, stream) cached buffer, else a fresh one
                workspace = cached_workspace(decision, hidden, device)
                if workspace is None or workspace.numel() < int(layout["total_bytes"]):
                    # Inside a graph capture this buffer's zero fill is a node of the graph,
                    # ahead of the call's launches, and the buffer serves this call alone: the
                    # call leaves no launch plan that would hand it to later calls.
                    workspace = aligned_zeros(int(layout["total_bytes"]), device)
                    if capture is not None:
                        capture.reusable = False
            _check_workspace(workspace, int(layout["total_bytes"]))
            if borrowed:
                layout = dict(layout, n_chunks=int(layout["capacity_chunks"]))
            partial, counters = workspace_views(workspace, layout, hidden)
            values.update(partial=partial, counters=counters)
            if owned:
                values.update(n_chunks=int(layout["n_chunks"]),
                              rows_per_chunk=int(layout["rows_per_chunk"]))
    if capture is not None:
        capture.inputs.update(g=(g_in, align), x=(x_in, align), w=(w, BACKWARD_ALIGNMENT),
                              r=(rstd, 4))
        if g_residual is not None:
            capture.inputs["g_h"] = (gh_in, align)
        capture.outputs.update(dx=(dx_out, False), dw=(dw_out, owner is None))
    _launch(decision, values, rows, grids, capture=capture)
    return dx_out, dw_out
