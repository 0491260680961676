"""Argument binding in arg_plan order and the launch path (grid from routing or forced)."""

from __future__ import annotations

from typing import Any

import pytest
from jit_support import make_record

from miles_ext_kernels.cake.jit import launch
from miles_ext_kernels.cake.jit.launch import BindingError, bind_arguments, binding_plan

BWD_PLAN = [("buffer", "g"), ("buffer", "x"), ("buffer", "w"), ("buffer", "r"), ("buffer", "dx"),
            ("buffer", "dw"), ("buffer", "partial"), ("buffer", "counters"), ("buffer", "g_h"),
            ("parameter", "T"), ("parameter", "g_stride"), ("parameter", "x_stride"),
            ("parameter", "gh_stride"), ("parameter", "n_chunks"),
            ("parameter", "rows_per_chunk"),
            ("grid", "grid_x"), ("grid", "grid_y"), ("grid", "grid_z")]
BWD_LOGICAL = {"g": "g", "x": "x", "w": "w", "r": "r", "dx": "dx", "dw": "dw",
               "partial": "partial", "counters": "counters", "g_h": "g_h", "T": "rows",
               "g_stride": "g_stride", "x_stride": "x_stride", "gh_stride": "g_h_stride",
               "n_chunks": "n_chunks", "rows_per_chunk": "rows_per_chunk"}


def _values() -> dict[str, Any]:
    names = ["x", "w", "y", "r", "u", "h_new", "g", "g_h", "dx", "dw", "partial", "counters",
             "rows", "eps", "x_stride", "u_stride", "g_stride", "g_h_stride", "n_chunks",
             "rows_per_chunk", "hidden", "flags"]
    return {name: f"<{name}>" for name in names}


def test_forward_arguments_follow_arg_plan_with_grid_last() -> None:
    args = bind_arguments(make_record(), _values(), (7, 1, 1))
    assert args == ["<x>", "<u>", "<w>", "<y>", "<h_new>", "<r>", "<rows>", "<x_stride>",
                    "<u_stride>", "<eps>", 7, 1, 1]


def test_backward_maps_kernel_names_onto_logical_names() -> None:
    record = make_record("demo_bwd", arg_plan=BWD_PLAN, logical=BWD_LOGICAL, role="bwd_main",
                         grid_rule={"kind": "sm_scaled_bounded", "ctas_per_sm": 2},
                         workspace_rule={"kind": "persistent_grid", "counters": 16})
    args = bind_arguments(record, _values(), (296, 1, 1))
    assert args[9] == "<rows>"  # kernel "T"
    assert args[12] == "<g_h_stride>"  # kernel "gh_stride"
    assert args[-3:] == [296, 1, 1]
    assert len(args) == len(BWD_PLAN)


def test_missing_logical_value_names_it_and_the_module() -> None:
    values = _values()
    del values["eps"]
    with pytest.raises(BindingError) as info:
        bind_arguments(make_record("fwd_needs_eps"), values, (1, 1, 1))
    assert "'eps'" in str(info.value) and "fwd_needs_eps" in str(info.value)


def test_short_grid_is_an_error() -> None:
    with pytest.raises(BindingError, match="grid must have 3 entries"):
        bind_arguments(make_record(), _values(), (4,))


def test_binding_plan_is_computed_once_per_record() -> None:
    record = make_record()
    assert binding_plan(record) is binding_plan(record)
    assert binding_plan(make_record()) is not binding_plan(record)


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.inside_stream = False
        self.stream_entered = 0

    def entry(self, *args: Any) -> None:
        self.calls.append((self.inside_stream, *args))


class _StreamContext:
    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def __enter__(self) -> None:
        self.recorder.inside_stream = True
        self.recorder.stream_entered += 1

    def __exit__(self, *exc: object) -> None:
        self.recorder.inside_stream = False


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    import tvm_ffi

    rec = _Recorder()
    monkeypatch.setattr(launch, "_entry_for", lambda package, record, arch: rec.entry)
    monkeypatch.setattr(tvm_ffi, "use_torch_stream", lambda: _StreamContext(rec))
    return rec


def test_run_module_uses_the_routing_grid_inside_the_torch_stream(recorder: _Recorder) -> None:
    record = make_record()  # rows_per_cta 8, no cap
    launch.run_module(None, record, _values(), rows=100, arch="sm_100a", sm_count=148)
    assert recorder.stream_entered == 1
    inside, *args = recorder.calls[0]
    assert inside is True
    assert args[-3:] == [13, 1, 1]  # ceil(100 / 8)


def test_run_module_grid_override_forces_the_cta_count(recorder: _Recorder) -> None:
    launch.run_module(None, make_record(), _values(), rows=100, arch="sm_100a", sm_count=148,
                      grid=(3, 1, 1))
    assert recorder.calls[0][-3:] == (3, 1, 1)
