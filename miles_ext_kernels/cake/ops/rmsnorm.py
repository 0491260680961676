"""RMSNorm op facade: validation, layouts, dispatch over the program and reference backends.

Inputs are ``[..., H]`` tensors (leading dims are flattened into rows; a per-head view
``[T, heads, D]`` is ``T * heads`` rows of width ``D``) and a ``[H]`` weight. Every bad input
raises ``TypeError`` (wrong type / dtype) or ``ValueError`` (shape, device, aliasing) naming the
argument. ``T == 0`` returns empty outputs without a launch (the backward's ``dw`` is zeros).
"""

from __future__ import annotations

import numbers

import torch

from miles_ext_kernels.cake import dispatch
from miles_ext_kernels.cake.backends import launch_plans, reference
from miles_ext_kernels.cake.packages.records import CallSpec

__all__ = [
    "X_DTYPES",
    "W_DTYPES",
    "rmsnorm_forward",
    "rmsnorm_backward",
    "rmsnorm_workspace_bytes",
    "rmsnorm_workspace",
    "call_spec",
    "validate_forward_args",
]

X_DTYPES: tuple[torch.dtype, ...] = (torch.bfloat16, torch.float16, torch.float32)
W_DTYPES: tuple[torch.dtype, ...] = (torch.bfloat16, torch.float16, torch.float32)


# ----------------------------------------------------------------------------- validation


def _require_tensor(value: object, name: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def _require_dtype(tensor: torch.Tensor, name: str, allowed: tuple[torch.dtype, ...]) -> None:
    if tensor.dtype not in allowed:
        names = ", ".join(str(d).replace("torch.", "") for d in allowed)
        raise TypeError(f"{name} must have dtype {names}; got {tensor.dtype}")


def _require_device(tensor: torch.Tensor, name: str, device: torch.device) -> None:
    if tensor.device != device:
        raise ValueError(f"{name} is on {tensor.device} but x is on {device}")


def _require_like(tensor: object, name: str, x: torch.Tensor, what: str = "x") -> torch.Tensor:
    """``tensor`` must match ``x`` in shape, dtype and device."""
    tensor = _require_tensor(tensor, name)
    if tensor.dtype != x.dtype:
        raise TypeError(f"{name} must have the dtype of {what} ({x.dtype}); got {tensor.dtype}")
    _require_device(tensor, name, x.device)
    if tensor.shape != x.shape:
        raise ValueError(f"{name} must have the shape of {what} {tuple(x.shape)}; "
                         f"got {tuple(tensor.shape)}")
    return tensor


def _check_eps(eps: object) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number, got {type(eps).__name__}")
    value = float(eps)
    if not (value >= 0.0 and value != float("inf")):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    return value


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def _check_input(x: object, name: str = "x") -> torch.Tensor:
    x = _require_tensor(x, name)
    _require_dtype(x, name, X_DTYPES)
    if x.dim() < 1:
        raise ValueError(f"{name} must have at least one dimension [..., H]; got a scalar")
    if x.shape[-1] == 0:
        raise ValueError(f"{name} has an empty feature dimension (H = 0)")
    return x


def _check_weight(w: object, x: torch.Tensor) -> torch.Tensor:
    w = _require_tensor(w, "w")
    _require_dtype(w, "w", W_DTYPES)
    _require_device(w, "w", x.device)
    if w.dim() != 1 or w.shape[0] != x.shape[-1]:
        raise ValueError(f"w must have shape [H] = [{x.shape[-1]}] (the last dim of x); "
                         f"got {tuple(w.shape)}")
    return w


def _check_workspace(workspace: object, x: torch.Tensor) -> torch.Tensor:
    """A workspace is a contiguous 1-D uint8 tensor on ``x``'s device (every backend checks
    this; its size and alignment are checked where a program that uses it runs)."""
    workspace = _require_tensor(workspace, "workspace")
    if workspace.dtype != torch.uint8 or workspace.dim() != 1:
        raise ValueError(f"workspace must be a 1-D uint8 tensor (rmsnorm_workspace); got "
                         f"{workspace.dtype} {tuple(workspace.shape)}")
    _require_device(workspace, "workspace", x.device)
    if not workspace.is_contiguous():
        raise ValueError("workspace must be contiguous (rmsnorm_workspace)")
    return workspace


def _byte_span(tensor: torch.Tensor) -> tuple[int, int]:
    if tensor.numel() == 0:
        return (0, 0)
    start = tensor.data_ptr()
    extent = sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride(),
                                                                  strict=True))
    return start, start + (extent + 1) * tensor.element_size()


def _overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors may share memory (same storage, intersecting byte ranges)."""
    if a.numel() == 0 or b.numel() == 0 or a.device != b.device:
        return False
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    a0, a1 = _byte_span(a)
    b0, b1 = _byte_span(b)
    return a0 < b1 and b0 < a1


def _refuse_alias(out: torch.Tensor, name: str, inputs: dict[str, torch.Tensor | None]) -> None:
    for input_name, tensor in inputs.items():
        if tensor is not None and _overlaps(out, tensor):
            raise ValueError(f"{name} overlaps the input {input_name}; pass a separate buffer")


def _check_out(out: object, name: str, shape: torch.Size, dtype: torch.dtype,
               device: torch.device) -> torch.Tensor:
    out = _require_tensor(out, name)
    if out.dtype != dtype:
        raise TypeError(f"{name} must have dtype {dtype}; got {out.dtype}")
    _require_device(out, name, device)
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {tuple(shape)}; got {tuple(out.shape)}")
    return out


def _row_view(tensor: torch.Tensor) -> torch.Tensor:
    """``[..., H]`` as rows with a contiguous feature dim, without copying when possible.

    ``[rows, H]`` when the leading dims merge; else a per-head ``[T, heads, H]`` view (all but
    the last leading dim merged, e.g. a strided ``[T, heads, D]`` slice of a QKV buffer); else a
    contiguous ``[rows, H]`` copy. A feature dim with a stride other than 1 is copied once.
    """
    hidden = tensor.shape[-1]
    if hidden > 1 and tensor.stride(-1) != 1:
        tensor = tensor.contiguous()
    try:
        return tensor.view(-1, hidden)
    except RuntimeError:
        pass
    try:
        return tensor.view(-1, tensor.shape[-2], hidden)
    except RuntimeError:
        return tensor.reshape(-1, hidden)


def _flat(view: torch.Tensor) -> torch.Tensor:
    """A row view as ``[rows, H]`` (the reference backend's layout; may copy)."""
    return view.reshape(-1, view.shape[-1])


def validate_forward_args(x: object, w: object, eps: object, residual: object,
                          zero_centered_gamma: object, cast_before_weight_mul: object) -> float:
    """The checks of :func:`rmsnorm_forward` (without running it); returns ``eps`` as a float."""
    x = _check_input(x)
    _check_weight(w, x)
    if residual is not None:
        _require_like(residual, "residual", x)
    _check_bool(zero_centered_gamma, "zero_centered_gamma")
    _check_bool(cast_before_weight_mul, "cast_before_weight_mul")
    return _check_eps(eps)


def call_spec(kind: str, hidden: int, x_dtype: torch.dtype, w_dtype: torch.dtype, *,
              residual: bool, zero_centered_gamma: bool,
              cast_before_weight_mul: bool) -> CallSpec:
    """The dispatcher's description of one call (cached: one frozen spec per signature)."""
    return dispatch.make_call(kind, int(hidden), x_dtype, w_dtype, residual=bool(residual),
                              zero_centered_gamma=bool(zero_centered_gamma),
                              cast_before_weight_mul=bool(cast_before_weight_mul))


# ----------------------------------------------------------------------------- forward


def rmsnorm_forward(
    x: torch.Tensor,
    w: torch.Tensor,
    eps: float = 1e-6,
    *,
    residual: torch.Tensor | None = None,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    out: torch.Tensor | None = None,
    backend: str | None = None,
    strict: bool | None = None,
) -> tuple[torch.Tensor, ...]:
    """RMSNorm forward of ``x`` ``[..., H]`` with weight ``w`` ``[H]``.

    Returns ``(y, rstd)``, or ``(y, rstd, h_new)`` with ``residual`` (``h_new = x + residual``
    rounded to ``x.dtype`` is what gets normalised). ``y`` and ``h_new`` have the shape and
    dtype of ``x``; ``rstd`` is FP32 of shape ``x.shape[:-1]``. ``out`` (optional) receives
    ``y``. ``backend`` / ``strict``: see :mod:`miles_ext_kernels.cake.dispatch`.

    A call whose signature already ran a program replays its launch plan
    (:mod:`~miles_ext_kernels.cake.backends.launch_plans`): same launches, less host time.
    """
    key = None
    if out is None:
        key = launch_plans.forward_signature(x, w, eps, residual, zero_centered_gamma,
                                             cast_before_weight_mul, backend, strict)
        plan = launch_plans.lookup(key)
        if plan is not None:
            replayed = launch_plans.run(plan, {"x": x, "w": w, "u": residual})
            if replayed is not None:
                return replayed
    x = _check_input(x)
    w = _check_weight(w, x)
    eps = _check_eps(eps)
    zero_centered_gamma = _check_bool(zero_centered_gamma, "zero_centered_gamma")
    cast_before_weight_mul = _check_bool(cast_before_weight_mul, "cast_before_weight_mul")
    if residual is not None:
        residual = _require_like(residual, "residual", x)
    if out is not None:
        out = _check_out(out, "out", x.shape, x.dtype, x.device)
        _refuse_alias(out, "out", {"x": x, "w": w, "residual": residual})
    hidden = x.shape[-1]
    lead = x.shape[:-1]
    rows = x.numel() // hidden
    if rows == 0:
        y = out if out is not None else torch.empty(x.shape, dtype=x.dtype, device=x.device)
        rstd = torch.empty(lead, dtype=torch.float32, device=x.device)
        if residual is None:
            return y, rstd
        return y, rstd, torch.empty(x.shape, dtype=x.dtype, device=x.device)
    spec = call_spec("fwd", hidden, x.dtype, w.dtype, residual=residual is not None,
                     zero_centered_gamma=zero_centered_gamma,
                     cast_before_weight_mul=cast_before_weight_mul)
    decision = dispatch.decide(spec, x.device, rows=rows, backend=backend, strict=strict)
    x2 = _row_view(x)
    u2 = _row_view(residual) if residual is not None else None
    y_buffer = None
    if out is not None and out.is_contiguous():
        y_buffer = out.view(rows, hidden)
    if decision.backend == "reference":
        outputs = reference.reference_forward(
            _flat(x2), w, eps, residual=_flat(u2) if u2 is not None else None,
            zero_centered_gamma=zero_centered_gamma, cast_before_weight_mul=cast_before_weight_mul)
    else:
        from miles_ext_kernels.cake.backends import programs

        capture = launch_plans.Capture() if key is not None else None
        outputs = programs.run_forward(
            decision, x2, w, eps, residual=u2, zero_centered_gamma=zero_centered_gamma,
            cast_before_weight_mul=cast_before_weight_mul, y=y_buffer, capture=capture)
        if capture is not None:
            results = [("y", tuple(x.shape)), ("r", tuple(lead))]
            if residual is not None:
                results.append(("h_new", tuple(x.shape)))
            launch_plans.remember_capture(key, capture, x.device,
                                          {"x": x, "w": w, "u": residual}, results)
    y2, rstd1 = outputs[0], outputs[1]
    if out is not None:
        if y2.data_ptr() != out.data_ptr() or not out.is_contiguous():
            out.copy_(y2.view(x.shape))
        y = out
    else:
        y = y2.view(x.shape)
    results: tuple[torch.Tensor, ...] = (y, rstd1.view(lead))
    if residual is not None:
        results = results + (outputs[2].view(x.shape),)
    return results


# ----------------------------------------------------------------------------- backward


def _check_grid(grid: object) -> int | None:
    if grid is None:
        return None
    if isinstance(grid, bool) or not isinstance(grid, int):
        raise TypeError(f"grid must be an int or None, got {type(grid).__name__}")
    if grid < 1:
        raise ValueError(f"grid must be >= 1, got {grid}")
    return grid


def rmsnorm_backward(
    g: torch.Tensor,
    x: torch.Tensor,
    w: torch.Tensor,
    rstd: torch.Tensor,
    *,
    deterministic: bool = True,
    g_residual: torch.Tensor | None = None,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    workspace: torch.Tensor | None = None,
    dx: torch.Tensor | None = None,
    dw: torch.Tensor | None = None,
    backend: str | None = None,
    strict: bool | None = None,
    grid: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm backward: ``(dx, dw)`` with ``dx`` like ``x`` and ``dw`` FP32 ``[H]``.

    ``x`` is the tensor that was normalised (``h_new`` of the residual form), ``rstd`` the
    forward's FP32 reciprocal RMS (any shape with one value per row). ``g_residual`` is the
    gradient flowing directly into ``h_new``; it is added so ``dx`` is the gradient of both
    residual-add inputs. ``workspace`` comes from :func:`rmsnorm_workspace` (allocated when
    omitted): a 1-D contiguous uint8 tensor on ``x``'s device, checked on every backend; its
    size and 256-byte alignment are checked where a program uses it (the reference backend
    does not). ``dx`` / ``dw`` are optional output buffers and must not overlap any input.
    ``deterministic=False`` allows a non-deterministic ``dw`` route where one exists.
    ``grid`` forces the CTA count of the backward program that owns the workspace (testing
    hook; ignored by the reference backend and by the first-party small-batch program, whose
    cluster follows from the hidden size).

    Without ``dx``, ``dw`` and ``grid``, a call whose signature (including the workspace
    buffer) already ran a program replays its launch plan
    (:mod:`~miles_ext_kernels.cake.backends.launch_plans`).
    """
    key = None
    if dx is None and dw is None and grid is None:
        key = launch_plans.backward_signature(g, x, w, rstd, g_residual, deterministic,
                                              zero_centered_gamma, cast_before_weight_mul,
                                              backend, strict, workspace)
        plan = launch_plans.lookup(key)
        if plan is not None:
            replayed = launch_plans.run(plan, {"g": g, "x": x, "w": w, "r": rstd,
                                               "g_h": g_residual})
            if replayed is not None:
                return replayed[0], replayed[1]
    x = _check_input(x)
    g = _require_like(g, "g", x)
    w = _check_weight(w, x)
    rstd = _require_tensor(rstd, "rstd")
    if rstd.dtype != torch.float32:
        raise TypeError(f"rstd must have dtype float32; got {rstd.dtype}")
    _require_device(rstd, "rstd", x.device)
    hidden = x.shape[-1]
    rows = x.numel() // hidden
    if rstd.numel() != rows:
        raise ValueError(f"rstd must hold one value per row of x ({rows}); "
                         f"got shape {tuple(rstd.shape)}")
    deterministic = _check_bool(deterministic, "deterministic")
    zero_centered_gamma = _check_bool(zero_centered_gamma, "zero_centered_gamma")
    cast_before_weight_mul = _check_bool(cast_before_weight_mul, "cast_before_weight_mul")
    grid = _check_grid(grid)
    if g_residual is not None:
        g_residual = _require_like(g_residual, "g_residual", x)
    if workspace is not None:
        workspace = _check_workspace(workspace, x)
    inputs = {"g": g, "x": x, "w": w, "rstd": rstd, "g_residual": g_residual,
              "workspace": workspace}
    if dx is not None:
        dx = _check_out(dx, "dx", x.shape, x.dtype, x.device)
        _refuse_alias(dx, "dx", inputs)
    if dw is not None:
        dw = _check_out(dw, "dw", torch.Size([hidden]), torch.float32, x.device)
        _refuse_alias(dw, "dw", inputs)
        if dx is not None and _overlaps(dx, dw):
            raise ValueError("dw overlaps dx; pass separate buffers")
    if rows == 0:
        dx_out = dx if dx is not None else torch.empty(x.shape, dtype=x.dtype, device=x.device)
        dw_out = dw if dw is not None else torch.empty(hidden, dtype=torch.float32,
                                                       device=x.device)
        dw_out.zero_()
        return dx_out, dw_out
    spec = call_spec("bwd", hidden, x.dtype, w.dtype, residual=g_residual is not None,
                     zero_centered_gamma=zero_centered_gamma,
                     cast_before_weight_mul=cast_before_weight_mul)
    decision = dispatch.decide(spec, x.device, rows=rows, backend=backend, strict=strict,
                               deterministic=deterministic)
    g2, x2 = _row_view(g), _row_view(x)
    gh2 = _row_view(g_residual) if g_residual is not None else None
    rstd1 = rstd.reshape(rows)
    if decision.backend == "reference":
        dx2, dw1 = reference.reference_backward(
            _flat(g2), _flat(x2), w, rstd1, g_residual=_flat(gh2) if gh2 is not None else None,
            zero_centered_gamma=zero_centered_gamma, cast_before_weight_mul=cast_before_weight_mul)
    else:
        from miles_ext_kernels.cake.backends import programs

        dx_buffer = dx.view(rows, hidden) if dx is not None and dx.is_contiguous() else None
        dw_buffer = dw if dw is not None and dw.is_contiguous() else None
        capture = launch_plans.Capture() if key is not None else None
        dx2, dw1 = programs.run_backward(
            decision, g2, x2, w, rstd1, g_residual=gh2, zero_centered_gamma=zero_centered_gamma,
            cast_before_weight_mul=cast_before_weight_mul, workspace=workspace, dx=dx_buffer,
            dw=dw_buffer, grid=grid, capture=capture)
        if capture is not None:
            launch_plans.remember_capture(
                key, capture, x.device,
                {"g": g, "x": x, "w": w, "r": rstd, "g_h": g_residual},
                [("dx", tuple(x.shape)), ("dw", (hidden,))])
    if dx is not None:
        if dx2.data_ptr() != dx.data_ptr() or not dx.is_contiguous():
            dx.copy_(dx2.view(x.shape))
        dx_out = dx
    else:
        dx_out = dx2.view(x.shape)
    if dw is not None:
        if dw1.data_ptr() != dw.data_ptr():
            dw.copy_(dw1)
        dw_out = dw
    else:
        dw_out = dw1
    return dx_out, dw_out


# ----------------------------------------------------------------------------- workspace


def rmsnorm_workspace_bytes(
    hidden: int,
    device: torch.device | str,
    *,
    residual: bool = False,
    deterministic: bool = True,
    dtype: torch.dtype = torch.bfloat16,
    weight_dtype: torch.dtype = torch.bfloat16,
    zero_centered_gamma: bool = False,
    cast_before_weight_mul: bool = False,
    backend: str | None = None,
    strict: bool | None = None,
) -> int:
    """Bytes of the backward workspace the call would use on ``device`` (0 when none).

    The size does not depend on the row count; one buffer serves every call of this width.
    """
    if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden <= 0:
        raise ValueError(f"hidden must be a positive int, got {hidden!r}")
    device = torch.device(device)
    spec = call_spec("bwd", hidden, dtype, weight_dtype, residual=residual,
                     zero_centered_gamma=zero_centered_gamma,
                     cast_before_weight_mul=cast_before_weight_mul)
    decision = dispatch.decide(spec, device, rows=None, backend=backend, strict=strict,
                               deterministic=deterministic)
    if decision.backend == "reference" or decision.route is None:
        return 0
    from miles_ext_kernels.cake.backends import programs

    return programs.workspace_bytes(decision, hidden)


def rmsnorm_workspace(
    hidden: int,
    device: torch.device | str,
    **options: object,
) -> torch.Tensor:
    """A zeroed uint8 workspace of :func:`rmsnorm_workspace_bytes` bytes on ``device``.

    Fresh CUDA allocations are 256-byte aligned. The counters start at zero and the kernels
    leave them zero, so the buffer is reusable across calls, row counts and CUDA graph replays.
    ``options`` are the keyword arguments of :func:`rmsnorm_workspace_bytes`.
    """
    from miles_ext_kernels.cake.backends.programs import aligned_zeros

    nbytes = rmsnorm_workspace_bytes(hidden, device, **options)  # type: ignore[arg-type]
    return aligned_zeros(nbytes, torch.device(device))
