"""Unit tests of routing rules on small hand-written records (upstream and first-party kinds)."""

from __future__ import annotations

import pytest

from miles_ext_kernels.cake import routing


def _record(grid_rule, workspace_rule=None, hidden=1024, select_rule=None):
    return {"name": "toy", "kernel": "toy", "hidden": hidden, "grid_rule": grid_rule,
            "workspace_rule": workspace_rule, "select_rule": select_rule}


def _chunked(workspace_rule):
    """A two-CTAs-an-SM chunk_bounded record with ``workspace_rule``, no hidden size."""
    return _record({"kind": "chunk_bounded", "ctas_per_sm": 2}, workspace_rule, hidden=None)


def test_route_key_forms():
    assert routing.route_key(6144, "fwd", True) == "fwd_residual_h6144"
    assert routing.route_key(512, "bwd", False) == "bwd_h512"
    assert routing.route_key(None, "bwd_nondet", True) == "bwd_nondet_residual"
    with pytest.raises(ValueError, match="kind must be one of"):
        routing.route_key(512, "backward", False)
    with pytest.raises(ValueError, match="hidden must be positive"):
        routing.route_key(0, "fwd", False)


@pytest.mark.parametrize(("rule", "rows", "admitted"), [
    (None, 1, True),
    ({"kind": "rows_between", "above": 256, "at_most": 1024}, 256, False),
    ({"kind": "rows_between", "above": 256, "at_most": 1024}, 257, True),
    ({"kind": "rows_between", "above": 256, "at_most": 1024}, 1024, True),
    ({"kind": "rows_between", "above": 256, "at_most": 1024}, 1025, False),
    ({"kind": "rows_between", "above": 0, "at_most": None}, 10**9, True),
    ({"kind": "rows_outside", "above": 16, "at_most": 32}, 1, True),
    ({"kind": "rows_outside", "above": 16, "at_most": 32}, 16, True),
    ({"kind": "rows_outside", "above": 16, "at_most": 32}, 17, False),
    ({"kind": "rows_outside", "above": 16, "at_most": 32}, 32, False),
    ({"kind": "rows_outside", "above": 16, "at_most": 32}, 33, True),
])
def test_select_rule_admits(rule, rows, admitted):
    assert routing.select_rule_admits(rule, rows) is admitted


def test_select_rule_unknown_kind():
    with pytest.raises(ValueError, match="unknown select_rule kind 'rows_over'"):
        routing.select_rule_admits({"kind": "rows_over"}, 3)


@pytest.mark.parametrize(("rule", "rows", "sm", "grid_x"), [
    ({"kind": "rows_per_cta", "rows_per_cta": 8, "grid_limit": 0, "grid_per_sm": 0}, 17, 132, 3),
    ({"kind": "rows_per_cta", "rows_per_cta": 1, "grid_limit": 0, "grid_per_sm": 4}, 10**6, 132,
     528),
    # grid_limit wins over grid_per_sm
    ({"kind": "rows_per_cta", "rows_per_cta": 1, "grid_limit": 100, "grid_per_sm": 4}, 10**6,
     132, 100),
    ({"kind": "fixed", "ctas": 7}, 1, 132, 7),
    ({"kind": "sm_scaled_bounded", "ctas_per_sm": 2}, 100, 132, 100),
    ({"kind": "sm_scaled_bounded", "ctas_per_sm": 2}, 100_000, 148, 296),
])
def test_launch_grid_upstream_kinds(rule, rows, sm, grid_x):
    assert routing.launch_grid(_record(rule), rows, sm_count=sm) == (grid_x, 1, 1)


def test_launch_grid_chunk_bounded_follows_fixed_chunks():
    record = _chunked({"kind": "fixed_chunks", "max_chunks": 512, "min_rows_per_chunk": 32,
                       "counters": 4, "partial_dtype": "float64"})
    assert routing.launch_grid(record, 100, sm_count=132) == (4, 1, 1)  # ceil(100 / 32)
    assert routing.launch_grid(record, 10**6, sm_count=132) == (264, 1, 1)  # 2 * SMs
    assert routing.launch_grid(record, 10**6, sm_count=132, n_chunks=9) == (9, 1, 1)


def test_launch_grid_bad_inputs():
    record = _record({"kind": "fixed", "ctas": 1})
    for rows in (0, -3):
        with pytest.raises(ValueError, match="rows must be positive"):
            routing.launch_grid(record, rows, sm_count=132)
    with pytest.raises(TypeError, match="rows must be an int"):
        routing.launch_grid(record, 2.0, sm_count=132)
    with pytest.raises(ValueError, match="sm_count must be positive"):
        routing.launch_grid(record, 2, sm_count=0)
    with pytest.raises(ValueError, match="unknown grid_rule kind 'spiral'"):
        routing.launch_grid(_record({"kind": "spiral"}), 2, sm_count=1)
    with pytest.raises(ValueError, match="chunk_bounded grid needs n_chunks"):
        routing.launch_grid(_record({"kind": "chunk_bounded", "ctas_per_sm": 1}), 2, sm_count=1)


def test_fixed_chunks_partition_ignores_sm_count():
    record = _record({"kind": "chunk_bounded", "ctas_per_sm": 1},
                     {"kind": "fixed_chunks", "max_chunks": 256, "min_rows_per_chunk": 16,
                      "counters": 8, "partial_dtype": "float64"}, hidden=None)
    for rows in (1, 15, 16, 17, 4096, 4097, 65536, 10**6):
        by_sm = {routing.chunking(record, rows, sm_count=sm, hidden=4096)
                 for sm in (78, 114, 132, 148, 152)}
        assert len(by_sm) == 1
        (n_chunks, rows_per_chunk), = by_sm
        assert n_chunks == min(256, -(-rows // 16))
        assert rows_per_chunk == -(-rows // n_chunks)
        assert n_chunks * rows_per_chunk >= rows


def test_fixed_chunks_sqrt_rows_factor_caps_the_chunk_count():
    rule = {"kind": "fixed_chunks", "max_chunks": 256, "min_rows_per_chunk": 2,
            "counters": 2, "partial_dtype": "float64", "sqrt_rows_factor": 4}
    record = _chunked(rule)
    # rows -> min(256, ceil(rows / 2), 4 * ceil(sqrt(rows)))
    expected = {1: 1, 2: 1, 3: 2, 16: 8, 64: 32, 65: 33, 256: 64, 257: 68, 1000: 128, 1024: 128,
                4096: 256, 65536: 256}
    for rows, n_chunks in expected.items():
        by_sm = {routing.chunking(record, rows, sm_count=sm, hidden=512) for sm in (78, 132, 148)}
        assert by_sm == {(n_chunks, -(-rows // n_chunks))}, rows
    # the capacity (workspace size) still follows max_chunks
    assert routing.workspace_layout(record, 64, sm_count=132, hidden=8)["capacity_chunks"] == 256
    assert routing.launch_grid(record, 1000, sm_count=132) == (128, 1, 1)
    # factor 0 (the default) is off
    off = _chunked({**rule, "sqrt_rows_factor": 0})
    assert routing.chunking(off, 1000, sm_count=132)[0] == 256


def test_fixed_chunks_spread_raises_a_folded_partition_to_spread_chunks():
    rule = {"kind": "fixed_chunks", "max_chunks": 264, "min_rows_per_chunk": 32,
            "counters": 2, "partial_dtype": "float64", "sqrt_rows_factor": 4,
            "spread_chunks": 8, "spread_rows_per_chunk": 2}
    record = _chunked(rule)
    # one chunk stays one chunk (no fold to spread); two or more become at least
    # min(8, ceil(rows / 2)); past that the usual rule
    expected = {1: 1, 32: 1, 33: 8, 34: 8, 48: 8, 64: 8, 128: 8, 255: 8, 256: 8, 257: 9,
                1024: 32, 65536: 264}
    for rows, n_chunks in expected.items():
        by_sm = {routing.chunking(record, rows, sm_count=sm, hidden=256) for sm in (78, 132)}
        assert by_sm == {(n_chunks, -(-rows // n_chunks))}, rows
    narrow = _chunked({**rule, "min_rows_per_chunk": 4, "spread_rows_per_chunk": 3})
    assert routing.chunking(narrow, 5, sm_count=132)[0] == 2  # ceil(5 / 3)
    assert routing.chunking(narrow, 12, sm_count=132)[0] == 4  # ceil(12 / 3)
    assert routing.chunking(narrow, 20, sm_count=132)[0] == 7  # ceil(20 / 3)
    assert routing.chunking(narrow, 4, sm_count=132)[0] == 1
    capped = _chunked({**rule, "max_chunks": 4})
    assert routing.chunking(capped, 100, sm_count=132)[0] == 4
    off = _chunked({**rule, "spread_chunks": 0})
    assert routing.chunking(off, 64, sm_count=132)[0] == 2


def test_fixed_chunks_large_rows_take_fewer_chunks_in_the_same_workspace():
    rule = {"kind": "fixed_chunks", "max_chunks": 264, "min_rows_per_chunk": 4,
            "counters": 16, "partial_dtype": "float64", "sqrt_rows_factor": 4,
            "spread_chunks": 8, "spread_rows_per_chunk": 2}
    large = {**rule, "large_rows": 16384, "large_max_chunks": 132}
    plain = _chunked(rule)
    record = _chunked(large)
    # below large_rows the rule is the plain one; from it, at most large_max_chunks chunks
    for rows in (1, 33, 1000, 4096, 16383):
        assert (routing.chunking(record, rows, sm_count=132)
                == routing.chunking(plain, rows, sm_count=132)), rows
    assert routing.chunking(plain, 16384, sm_count=132) == (264, 63)
    for rows, want in ((16384, (132, 125)), (65536, (132, 497)), (10**6, (132, 7576))):
        by_sm = {routing.chunking(record, rows, sm_count=sm, hidden=2048) for sm in (78, 132)}
        assert by_sm == {want}, rows
    assert routing.launch_grid(record, 16384, sm_count=132) == (132, 1, 1)
    assert routing.launch_grid(record, 16383, sm_count=132) == (264, 1, 1)
    # the partials keep max_chunks rows: one layout (the route's workspace) for both
    assert (routing.workspace_bytes(record, sm_count=132, hidden=2048)
            == routing.workspace_bytes(plain, sm_count=132, hidden=2048))
    layout = routing.workspace_layout(record, 16384, sm_count=132, hidden=2048)
    assert layout["capacity_chunks"] == 264 and layout["n_chunks"] == 132
    # a cap above the rule's own count changes nothing; large_rows 0 (the default) is off
    loose = _chunked({**large, "large_max_chunks": 264})
    assert routing.chunking(loose, 65536, sm_count=132)[0] == 264
    off = _chunked({**large, "large_rows": 0})
    assert routing.chunking(off, 65536, sm_count=132)[0] == 264
    # a small large_rows keeps the spread of small batches under the large cap
    small = _chunked({**rule, "large_rows": 16, "large_max_chunks": 4})
    assert routing.chunking(small, 15, sm_count=132)[0] == 8
    assert routing.chunking(small, 16, sm_count=132)[0] == 4


def test_persistent_grid_partition_follows_sm_count():
    record = _record({"kind": "sm_scaled_bounded", "ctas_per_sm": 2},
                     {"kind": "persistent_grid", "counters": 16})
    assert routing.chunking(record, 100_000, sm_count=132) == (264, 379)
    assert routing.chunking(record, 100_000, sm_count=148) == (296, 338)


def test_workspace_layout_fixed_chunks_float64():
    record = _chunked({"kind": "fixed_chunks", "max_chunks": 100, "min_rows_per_chunk": 16,
                       "counters": 3, "partial_dtype": "float64"})
    layout = routing.workspace_layout(record, 1000, sm_count=132, hidden=72)
    assert layout == {
        "n_chunks": 63, "rows_per_chunk": 16, "capacity_chunks": 100,
        "partial_bytes": 8 * 100 * 72, "counters": 3,
        "counters_offset": 57600, "total_bytes": 57600 + 256, "partial_dtype": "float64",
    }
    assert routing.workspace_bytes(record, sm_count=1, hidden=72) == layout["total_bytes"]
    # hidden 9 -> 7200 bytes of partials, counters at the next 256 multiple
    assert routing.workspace_layout(record, 5, sm_count=1, hidden=9)["counters_offset"] == 7424
    with pytest.raises(ValueError, match="pass hidden="):
        routing.workspace_bytes(record, sm_count=132)


def test_workspace_layout_persistent_grid_float32():
    record = _record({"kind": "sm_scaled_bounded", "ctas_per_sm": 2},
                     {"kind": "persistent_grid", "counters": 0}, hidden=512)
    layout = routing.workspace_layout(record, 10, sm_count=148)
    assert layout["partial_dtype"] == "float32"
    assert layout["partial_bytes"] == 4 * 296 * 512
    assert layout["total_bytes"] == 4 * 296 * 512 + 256  # max(counters, 1) counters
    with pytest.raises(ValueError, match="built for hidden=512"):
        routing.workspace_layout(record, 10, sm_count=148, hidden=1024)


def test_records_without_workspace():
    for rule in (None, {"kind": "atomic"}, {"kind": "borrowed", "above_rows": 16}):
        record = _record({"kind": "rows_per_cta", "rows_per_cta": 1}, rule)
        assert routing.workspace_bytes(record, sm_count=132) == 0
        with pytest.raises(ValueError, match="owns no chunked backward workspace"):
            routing.workspace_layout(record, 10, sm_count=132)
        with pytest.raises(ValueError, match="owns no chunked backward workspace"):
            routing.chunking(record, 10, sm_count=132)


def test_borrowed_workspace_is_used_above_its_rows_only():
    # the first-party small-batch backward owns no workspace; over several clusters (more than
    # above_rows rows) it uses the route owner's
    small = _record({"kind": "fixed", "ctas": 16}, {"kind": "borrowed", "above_rows": 16})
    owner = _record({"kind": "chunk_bounded", "ctas_per_sm": 2},
                    {"kind": "fixed_chunks", "max_chunks": 264, "min_rows_per_chunk": 2,
                     "counters": 16})
    assert not routing.owns_workspace(small) and routing.owns_workspace(owner)
    assert not routing.owns_workspace(_record({"kind": "fixed", "ctas": 1}, {"kind": "atomic"}))
    assert [routing.borrows_workspace(small, rows) for rows in (1, 16, 17, 256)] == [
        False, False, True, True]
    assert not routing.borrows_workspace(owner, 10**6)
    assert not routing.borrows_workspace(_record({"kind": "fixed", "ctas": 1}), 10**6)
    with pytest.raises(ValueError, match="unknown workspace_rule kind"):
        routing.borrows_workspace(_record({"kind": "fixed", "ctas": 1}, {"kind": "lent"}), 1)
