"""Launch plans: the host fast path of a repeated program call.

A training loop calls the op with the same signature (shapes, strides, dtypes, device,
contract, backend) over and over. The full path validates every argument, asks the dispatcher,
derives row views, checks layouts, binds the record's argument plan and computes the grid on
each call: several dozen microseconds of Python per call, more than the kernel at small T.

After a call has run a program through the full path, :func:`remember` stores what that path
derived for its signature: per module the entry function and its bound arguments, with each
tensor argument replaced by a slot (a user input seen through a fixed view, or an output to
allocate). A later call with the same signature (:func:`forward_signature`,
:func:`backward_signature`) only allocates its outputs, fills the slots and calls the entries
(:func:`run`). The signature holds everything the full path's decisions depend on, so a hit
makes the same launches; what it cannot hold (data addresses) is checked per call, and a call
that fails a check takes the full path.

Plans are made only where the full path read every input in place (no copies) and wrote into
fresh outputs; they hold the backward workspace (the cached one, or the caller's, whose address
is part of the key), so they are dropped with the cache (:func:`clear`, called by
``programs.clear_workspace_cache`` and ``dispatch.clear_caches``).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from miles_ext_kernels.cake import dispatch

__all__ = [
    "MAX_PLANS",
    "Slot",
    "Input",
    "Output",
    "Step",
    "LaunchPlan",
    "forward_signature",
    "backward_signature",
    "lookup",
    "remember",
    "build_plan",
    "Capture",
    "remember_capture",
    "run",
    "clear",
    "plan_count",
]

MAX_PLANS = 512
_ENV_NAMES = ("MILES_EXT_KERNELS_RMSNORM_BACKEND", "MILES_EXT_KERNELS_STRICT")


_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def _tensor_signature(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.shape, t.stride(), t.dtype, t.get_device())


_NOT_A_TENSOR = ("not a tensor",)


def _optional_signature(t: Any) -> tuple[Any, ...] | None:
    """The signature of an optional tensor argument (None for None; :data:`_NOT_A_TENSOR` for
    anything else that is not a plain tensor, which makes the call unplannable)."""
    if t is None:
        return None
    if type(t) in _TENSOR_TYPES:
        return _tensor_signature(t)
    return _NOT_A_TENSOR


def _env() -> tuple[str | None, ...]:
    return tuple(os.environ.get(name) for name in _ENV_NAMES)


def forward_signature(x: Any, w: Any, eps: Any, residual: Any, zero_centered_gamma: Any,
                      cast_before_weight_mul: Any, backend: Any,
                      strict: Any) -> tuple[Any, ...] | None:
    """The plan key of a forward call, or None when the call cannot have a plan.

    None for anything but plain CUDA tensors and exact ``bool`` / ``float`` options (a key must
    not let ``1`` stand for ``True``, which the full path would refuse).
    """
    if (type(x) not in _TENSOR_TYPES or type(w) not in _TENSOR_TYPES or not x.is_cuda
            or type(eps) is not float or type(zero_centered_gamma) is not bool
            or type(cast_before_weight_mul) is not bool):
        return None
    res = _optional_signature(residual)
    if res is _NOT_A_TENSOR:
        return None
    return ("fwd", _tensor_signature(x), _tensor_signature(w), res, eps, zero_centered_gamma,
            cast_before_weight_mul, backend, strict, _env())


def backward_signature(g: Any, x: Any, w: Any, rstd: Any, g_residual: Any, deterministic: Any,
                       zero_centered_gamma: Any, cast_before_weight_mul: Any, backend: Any,
                       strict: Any, workspace: Any = None) -> tuple[Any, ...] | None:
    """The plan key of a backward call (None when it cannot have one).

    It names the current stream, whose cached workspace the plan holds, or the caller's
    ``workspace`` by address and layout: the plan keeps views of that buffer (so its memory
    stays allocated while the plan lives), and a call with another buffer has another key.
    """
    if (type(x) not in _TENSOR_TYPES or type(g) not in _TENSOR_TYPES
            or type(w) not in _TENSOR_TYPES or type(rstd) not in _TENSOR_TYPES or not x.is_cuda
            or type(deterministic) is not bool or type(zero_centered_gamma) is not bool
            or type(cast_before_weight_mul) is not bool):
        return None
    res = _optional_signature(g_residual)
    buffer = _optional_signature(workspace)
    if res is _NOT_A_TENSOR or buffer is _NOT_A_TENSOR:
        return None
    if buffer is not None:
        buffer = (workspace.data_ptr(), *buffer)
    device = x.get_device()
    stream = torch._C._cuda_getCurrentRawStream(device)
    return ("bwd", _tensor_signature(g), _tensor_signature(x), _tensor_signature(w),
            _tensor_signature(rstd), res, deterministic, zero_centered_gamma,
            cast_before_weight_mul, backend, strict, _env(), stream, buffer)


_View = tuple[tuple[int, ...], tuple[int, ...]]  # (size, stride) over the same address


@dataclass(frozen=True)
class Slot:
    """A tensor argument: argument ``index`` is input or output ``source``."""

    index: int
    source: str


@dataclass(frozen=True)
class Input:
    """A user input: its ``name``, the byte alignment its address must have, and the view the
    programs read it through (None: the tensor as it is)."""

    name: str
    alignment: int
    view: _View | None


@dataclass(frozen=True)
class Output:
    """An output to allocate per call: ``name``, its shape, dtype and whether it starts zeroed;
    ``result_shape`` is the shape the caller gets (a view of it)."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    zeroed: bool
    result_shape: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """One module launch: its entry, its arguments with tensor slots left as None."""

    entry: Any
    template: tuple[Any, ...]
    slots: tuple[Slot, ...]


@dataclass(frozen=True)
class LaunchPlan:
    """What a signature's call does: input alignment checks, outputs, launches, results."""

    device: torch.device
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    steps: tuple[Step, ...]
    results: tuple[tuple[str, tuple[int, ...]], ...]  # (output name, shape the caller gets)


_PLANS: OrderedDict[tuple[Any, ...], LaunchPlan] = OrderedDict()
_LOCK = threading.Lock()


def lookup(key: tuple[Any, ...] | None) -> LaunchPlan | None:
    """The plan stored for ``key`` (None: no key, or none stored)."""
    if key is None:
        return None
    return _PLANS.get(key)


def remember(key: tuple[Any, ...], plan: LaunchPlan) -> None:
    """Store ``plan`` for ``key`` (the least recently stored goes beyond :data:`MAX_PLANS`)."""
    with _LOCK:
        _PLANS[key] = plan
        _PLANS.move_to_end(key)
        while len(_PLANS) > MAX_PLANS:
            _PLANS.popitem(last=False)


def clear() -> None:
    """Drop every plan (and with them their references to cached workspaces)."""
    with _LOCK:
        _PLANS.clear()


def plan_count() -> int:
    """How many plans are stored."""
    return len(_PLANS)


dispatch.on_clear_caches(clear)


def build_plan(
    device: torch.device,
    steps: Sequence[tuple[Any, Sequence[Any]]],
    inputs: Mapping[str, tuple[torch.Tensor, torch.Tensor, int]],
    outputs: Mapping[str, tuple[torch.Tensor, tuple[int, ...], bool]],
    results: Sequence[str],
) -> LaunchPlan | None:
    """A plan from one full-path call, or None when that call cannot be replayed.

    ``steps``: ``(entry, bound arguments)`` per module in launch order. ``inputs``: name ->
    ``(user tensor, tensor the programs read, alignment)``; the programs' tensor must be the
    user tensor or a view at the same address (else the full path copied it). ``outputs``:
    name -> ``(fresh tensor, shape the caller gets, zeroed)``. Every tensor argument must be one
    of these, or a constant the plan keeps (a workspace view, listed in neither).
    """
    roles: dict[int, str] = {}
    input_specs = []
    for name, (user, kernel, align) in inputs.items():
        if kernel.data_ptr() != user.data_ptr() or id(kernel) in roles:
            return None  # a copy, or one tensor standing for two inputs (not in the key)
        same = kernel.shape == user.shape and kernel.stride() == user.stride()
        view = None if same else (tuple(kernel.shape), tuple(kernel.stride()))
        roles[id(kernel)] = name
        input_specs.append(Input(name, align, view))
    output_specs: list[Output] = []
    for name, (tensor, result_shape, zeroed) in outputs.items():
        if not tensor.is_contiguous():
            return None
        roles.setdefault(id(tensor), name)
        output_specs.append(Output(name, tuple(tensor.shape), tensor.dtype, zeroed,
                                   tuple(result_shape)))
    plan_steps = []
    for entry, args in steps:
        template: list[Any] = []
        slots = []
        for index, arg in enumerate(args):
            role = roles.get(id(arg)) if isinstance(arg, torch.Tensor) else None
            if role is None:
                template.append(arg)
            else:
                template.append(None)
                slots.append(Slot(index, role))
        plan_steps.append(Step(entry, tuple(template), tuple(slots)))
    shapes = {out.name: out.result_shape for out in output_specs}
    return LaunchPlan(device=device, inputs=tuple(input_specs),
                      outputs=tuple(output_specs), steps=tuple(plan_steps),
                      results=tuple((name, shapes[name]) for name in results))


@dataclass
class Capture:
    """What the full path records for a plan: the programs' views of the inputs (with the
    alignment their addresses need), the fresh outputs, and each module's entry and arguments."""

    inputs: dict[str, tuple[torch.Tensor, int]] = field(default_factory=dict)
    outputs: dict[str, tuple[torch.Tensor, bool]] = field(default_factory=dict)
    steps: list[tuple[Any, list[Any]]] = field(default_factory=list)
    reusable: bool = True  # False: the call used something of its own (a fresh workspace)


def remember_capture(key: tuple[Any, ...], capture: Capture, device: torch.device,
                     user_inputs: Mapping[str, torch.Tensor | None],
                     results: Sequence[tuple[str, tuple[int, ...]]]) -> None:
    """Store the plan of a full-path call that recorded ``capture`` (nothing when it cannot be
    replayed). ``user_inputs``: the caller's tensors by input name; ``results``: the outputs the
    caller gets, in order, with their shapes."""
    if not capture.steps or not capture.reusable:
        return
    inputs = {}
    for name, (kernel, align) in capture.inputs.items():
        user = user_inputs.get(name)
        if user is None:
            return
        inputs[name] = (user, kernel, align)
    shapes = dict(results)
    outputs = {name: (tensor, shapes.get(name, tuple(tensor.shape)), zeroed)
               for name, (tensor, zeroed) in capture.outputs.items()}
    plan = build_plan(device, capture.steps, inputs, outputs, [name for name, _ in results])
    if plan is not None:
        remember(key, plan)


def run(plan: LaunchPlan, sources: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, ...] | None:
    """Launch ``plan`` on ``sources`` (its inputs by name); the results in the plan's order, or
    None (nothing launched) when an input's address lacks the plan's alignment."""
    tensors: dict[str, torch.Tensor] = {}
    for spec in plan.inputs:
        tensor = sources[spec.name]
        if tensor.data_ptr() % spec.alignment:
            return None
        if tensor.requires_grad:
            tensor = tensor.detach()
        tensors[spec.name] = tensor if spec.view is None else tensor.as_strided(*spec.view)
    for out in plan.outputs:
        make = torch.zeros if out.zeroed else torch.empty
        tensors[out.name] = make(out.shape, dtype=out.dtype, device=plan.device)
    calls = []
    for step in plan.steps:
        args = list(step.template)
        for slot in step.slots:
            args[slot.index] = tensors[slot.source]
        calls.append((step.entry, args))
    from miles_ext_kernels.cake.jit import launch

    launch.call_entries(calls, plan.device.index, detach=False)  # inputs detached above
    results = []
    for name, shape in plan.results:
        tensor = tensors[name]
        results.append(tensor if tensor.shape == shape else tensor.view(shape))
    return tuple(results)
