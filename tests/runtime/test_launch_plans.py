"""Launch plans on CPU: slots, constants, outputs, refusals, the cache and its invalidation.

The GPU side (plans made and replayed by the op facade, same bits as the full path) is in
tests/gpu/test_launch_plans_gpu.py.
"""

from __future__ import annotations

import pytest
import torch

from miles_ext_kernels.cake import dispatch
from miles_ext_kernels.cake.backends import launch_plans, programs
from miles_ext_kernels.cake.jit import launch

CPU = torch.device("cpu")


class Entry:
    """A fake program entry: records the arguments of each call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, *args) -> None:
        self.calls.append(args)


@pytest.fixture
def direct_calls(monkeypatch):
    """``call_entries`` without a CUDA stream: calls the entries in order."""
    def call_entries(calls, device, *, detach=True):
        assert not detach  # a replay passes its inputs detached already
        for entry, args in calls:
            entry(*args)
    monkeypatch.setattr(launch, "call_entries", call_entries)


@pytest.fixture(autouse=True)
def empty_cache():
    launch_plans.clear()
    yield
    launch_plans.clear()


def _forward_plan(entry: Entry, x: torch.Tensor, w: torch.Tensor):
    """The plan a forward over ``x`` (read as a ``[rows, 1, H]`` view) would leave."""
    rows, hidden = x.numel() // x.shape[-1], x.shape[-1]
    x_kernel = x.reshape(rows, hidden).view(rows, 1, hidden)
    y = torch.empty(rows, hidden, dtype=x.dtype)
    r = torch.empty(rows, dtype=torch.float32)
    workspace = torch.zeros(64, dtype=torch.uint8)
    args = [x_kernel, w, y, r, rows, hidden, 1e-6, workspace, x_kernel, y]
    return launch_plans.build_plan(
        CPU, [(entry, args)],
        inputs={"x": (x, x_kernel, 16), "w": (w, w, 16)},
        outputs={"y": (y, tuple(x.shape), False), "r": (r, tuple(x.shape[:-1]), False)},
        results=["y", "r"]), workspace


def test_plan_fills_slots_keeps_constants_and_allocates_outputs(direct_calls):
    entry = Entry()
    x0 = torch.randn(2, 3, 64).to(torch.bfloat16)
    w = torch.randn(64).to(torch.bfloat16)
    plan, workspace = _forward_plan(entry, x0, w)
    assert plan is not None
    x = torch.randn(2, 3, 64).to(torch.bfloat16)  # same signature, other data
    y, r = launch_plans.run(plan, {"x": x, "w": w, "u": None})
    (args,) = entry.calls
    assert args[0].data_ptr() == x.data_ptr()
    assert tuple(args[0].shape) == (6, 1, 64) and args[0].stride() == (64, 64, 1)
    assert args[1] is w
    assert args[2].data_ptr() == y.data_ptr() and tuple(args[2].shape) == (6, 64)
    assert args[3].data_ptr() == r.data_ptr() and args[3].dtype == torch.float32
    assert args[4:7] == (6, 64, 1e-6)
    assert args[7] is workspace  # constants are the recorded objects
    assert args[8] is args[0] and args[9] is args[2]  # one tensor, two arguments
    assert y.shape == x.shape and r.shape == (2, 3)  # results in the caller's shapes


def test_outputs_are_fresh_and_zeroed_where_the_plan_says(direct_calls):
    entry = Entry()
    g = torch.randn(4, 64).to(torch.bfloat16)
    dw = torch.zeros(64)
    plan = launch_plans.build_plan(
        CPU, [(entry, [g, dw])], inputs={"g": (g, g, 16)},
        outputs={"dw": (dw, (64,), True)}, results=["dw"])
    first = launch_plans.run(plan, {"g": g})[0]
    first.fill_(5.0)
    second = launch_plans.run(plan, {"g": g})[0]
    assert second.data_ptr() != first.data_ptr()
    assert torch.equal(second, torch.zeros(64))


def test_misaligned_input_is_refused_before_any_launch(direct_calls):
    entry = Entry()
    x0 = torch.randn(4, 64).to(torch.bfloat16)
    plan, _ = _forward_plan(entry, x0, torch.randn(64).to(torch.bfloat16))
    storage = torch.randn(4 * 64 + 1).to(torch.bfloat16)
    shifted = storage[1:].view(4, 64)  # 2 bytes past an aligned base
    assert shifted.data_ptr() % 16
    assert launch_plans.run(plan, {"x": shifted, "w": torch.randn(64).to(torch.bfloat16)}) is None
    assert entry.calls == []


def test_requires_grad_inputs_are_passed_detached(direct_calls):
    entry = Entry()
    x0 = torch.randn(4, 64).to(torch.bfloat16)
    w = torch.randn(64).to(torch.bfloat16)
    plan, _ = _forward_plan(entry, x0, w)
    x = x0.clone().requires_grad_()
    launch_plans.run(plan, {"x": x, "w": w.clone().requires_grad_()})
    (args,) = entry.calls
    assert not args[0].requires_grad and not args[1].requires_grad
    assert args[0].data_ptr() == x.data_ptr()


def test_copied_inputs_and_shared_kernel_tensors_make_no_plan():
    x = torch.randn(4, 64).to(torch.bfloat16)
    copy = x.clone()
    y = torch.empty(4, 64, dtype=x.dtype)
    assert launch_plans.build_plan(CPU, [(Entry(), [copy, y])], {"x": (x, copy, 16)},
                                   {"y": (y, (4, 64), False)}, ["y"]) is None
    # one kernel tensor standing for two inputs: the key cannot tell such calls apart
    assert launch_plans.build_plan(CPU, [(Entry(), [x, x, y])],
                                   {"g": (x, x, 16), "g_h": (x, x, 16)},
                                   {"y": (y, (4, 64), False)}, ["y"]) is None


def test_capture_without_launches_stores_nothing():
    launch_plans.remember_capture(("k",), launch_plans.Capture(), CPU, {}, [])
    assert launch_plans.plan_count() == 0


def test_cache_is_bounded_and_dropped_with_decisions_and_workspaces(monkeypatch):
    monkeypatch.setattr(launch_plans, "MAX_PLANS", 3)
    entry = Entry()
    plan, _ = _forward_plan(entry, torch.randn(4, 64).to(torch.bfloat16),
                            torch.randn(64).to(torch.bfloat16))
    for i in range(5):
        launch_plans.remember(("k", i), plan)
    assert launch_plans.plan_count() == 3
    assert launch_plans.lookup(("k", 0)) is None and launch_plans.lookup(("k", 4)) is plan
    dispatch.clear_caches()
    assert launch_plans.plan_count() == 0
    launch_plans.remember(("k", 0), plan)
    programs.clear_workspace_cache()
    assert launch_plans.plan_count() == 0
    assert launch_plans.lookup(None) is None


@pytest.mark.parametrize("case", ["cpu", "int_flag", "int_eps", "list_residual"])
def test_forward_signature_refuses_what_the_key_cannot_stand_for(case):
    x = torch.randn(4, 64).to(torch.bfloat16)
    w = torch.randn(64).to(torch.bfloat16)
    args = {"x": x, "w": w, "eps": 1e-6, "residual": None, "zero_centered_gamma": False,
            "cast_before_weight_mul": False, "backend": None, "strict": None}
    if case == "int_flag":
        args["zero_centered_gamma"] = 1  # the full path refuses it; a key must not accept it
    elif case == "int_eps":
        args["eps"] = 0
    elif case == "list_residual":
        args["residual"] = [1.0]
    assert launch_plans.forward_signature(**args) is None


def test_backward_signature_refuses_cpu_and_non_bool_options():
    x = torch.randn(4, 64).to(torch.bfloat16)
    w = torch.randn(64).to(torch.bfloat16)
    r = torch.randn(4)
    assert launch_plans.backward_signature(x, x, w, r, None, True, False, False, None,
                                           None) is None
    assert launch_plans.backward_signature(x, x, w, r, None, 1, False, False, None, None) is None
