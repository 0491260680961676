"""Route keys, select rules, launch grids, backward chunking and workspace layout.

Pure functions of a module record and plain numbers: no torch, no CUDA. The SM count of the
device is passed in by the caller. A record is a ``ModuleRecord`` or any mapping holding the
upstream record keys (``grid_rule``, ``select_rule``, ``workspace_rule``, ``hidden``).

Upstream (flashinfer-python 0.7.2.post1) rules, reproduced exactly:

* grid ``rows_per_cta``: ``ceil(rows / rows_per_cta)``, capped at ``grid_limit`` when it is
  positive, else at ``grid_per_sm * sm_count`` when that is positive;
* grid ``fixed``: ``ctas``;
* grid ``sm_scaled_bounded``: ``min(ctas_per_sm * sm_count, rows)`` (cooperative);
* workspace ``persistent_grid``: ``n_chunks`` = the grid, FP32 partials sized for the largest
  grid of the device.

First-party rules (docs/kernel_package_format.md):

* grid ``chunk_bounded``: ``min(n_chunks, ctas_per_sm * sm_count)`` (cooperative);
* workspace ``fixed_chunks``: ``n_chunks = min(max_chunks, ceil(rows / min_rows_per_chunk))``,
  and, with an optional ``sqrt_rows_factor`` f > 0, at most ``f * ceil(sqrt(rows))``; with an
  optional ``spread_chunks`` s > 0, a partition of two or more chunks has at least
  ``min(s, max_chunks, ceil(rows / spread_rows_per_chunk))``; with optional ``large_rows``
  L > 0 and ``large_max_chunks`` m, calls of at least L rows take ``m`` in place of
  ``max_chunks`` (fewer, larger chunks; the partials keep their ``max_chunks`` rows, so the
  record's workspace layout does not change); FP64 partials sized for ``max_chunks``
  (independent of the SM count);
* workspace ``atomic``: no workspace.

Every grid is at least 1 in x; y = z = 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

KINDS: tuple[str, ...] = ("fwd", "bwd", "bwd_nondet")
SELECT_RULE_KINDS: tuple[str, ...] = ("rows_between", "rows_outside")
GRID_RULE_KINDS: tuple[str, ...] = (
    "rows_per_cta",
    "fixed",
    "sm_scaled_bounded",
    "chunk_bounded",
)
# "borrowed": the module owns no workspace but uses its route owner's for calls of more than
# ``above_rows`` rows (the first-party small-batch backward over several clusters).
WORKSPACE_RULE_KINDS: tuple[str, ...] = ("persistent_grid", "fixed_chunks", "atomic", "borrowed")
_NO_OWN_WORKSPACE: tuple[str, ...] = ("atomic", "borrowed")
PARTIAL_DTYPE_BYTES: dict[str, int] = {"float32": 4, "float64": 8}
WORKSPACE_ALIGNMENT_BYTES = 256
COUNTER_BYTES = 4


_MISSING = object()


def _field(record: Any, key: str) -> Any:
    """Read ``key`` from a ``ModuleRecord`` (attribute) or a plain mapping (item)."""
    value = getattr(record, key, _MISSING)
    if value is _MISSING:
        return record[key]
    return value


def _record_label(record: Any) -> str:
    for key in ("name", "kernel"):
        try:
            value = _field(record, key)
        except (KeyError, AttributeError):
            continue
        if value:
            return str(value)
    return "<record>"


def _positive_int(value: Any, what: str) -> int:
    if type(value) is int and value > 0:  # fast path; bool is not int here
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be positive, got {value}")
    return int(value)


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _round_up(value: int, multiple: int) -> int:
    return _ceil_div(value, multiple) * multiple


def route_key(hidden: int | None, kind: str, residual: bool) -> str:
    """Name one route: ``<kind>[_residual]_h<hidden>`` (upstream) or ``<kind>[_residual]``.

    ``hidden=None`` gives the first-party key, whose programs take the hidden size at run time.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    base = f"{kind}{'_residual' if residual else ''}"
    if hidden is None:
        return base
    return f"{base}_h{_positive_int(hidden, 'hidden')}"


def select_rule_admits(rule: Mapping[str, Any] | None, rows: int) -> bool:
    """Whether a record's ``select_rule`` admits ``rows`` tokens.

    ``None`` admits every call; ``rows_between`` admits ``above < rows <= at_most``
    (``at_most`` ``None`` = unbounded); ``rows_outside`` (first-party) admits the rows outside
    that window, ``rows <= above`` or ``rows > at_most``.
    """
    if rule is None:
        return True
    kind = rule["kind"]
    if kind not in SELECT_RULE_KINDS:
        raise ValueError(f"unknown select_rule kind {kind!r}; known: {SELECT_RULE_KINDS}")
    at_most = rule["at_most"]
    inside = rows > rule["above"] and (at_most is None or rows <= at_most)
    return inside if kind == "rows_between" else not inside


def record_hidden(record: Any, hidden: int | None = None) -> int:
    """The hidden size a call of ``record`` runs at: the record's own, else ``hidden``."""
    own = _field(record, "hidden")
    if own is None:
        if hidden is None:
            raise ValueError(
                f"module {_record_label(record)} takes the hidden size at run time; "
                "pass hidden="
            )
        return _positive_int(hidden, "hidden")
    if hidden is not None and _positive_int(hidden, "hidden") != own:
        raise ValueError(
            f"module {_record_label(record)} is built for hidden={own}, got hidden={hidden}"
        )
    return int(own)


def _workspace_rule(record: Any) -> Mapping[str, Any] | None:
    rule = _field(record, "workspace_rule")
    if rule is not None and rule["kind"] not in WORKSPACE_RULE_KINDS:
        raise ValueError(
            f"module {_record_label(record)}: unknown workspace_rule kind {rule['kind']!r}; "
            f"known: {WORKSPACE_RULE_KINDS}"
        )
    return rule


def _chunk_rule(record: Any) -> Mapping[str, Any]:
    rule = _workspace_rule(record)
    if rule is None or rule["kind"] in _NO_OWN_WORKSPACE:
        raise ValueError(f"module {_record_label(record)} owns no chunked backward workspace")
    return rule


def _fixed_chunk_count(rule: Mapping[str, Any], rows: int) -> int:
    cap = rule["max_chunks"]
    large_rows = rule.get("large_rows", 0)
    if large_rows > 0 and rows >= large_rows:
        cap = rule["large_max_chunks"]
    n_chunks = min(cap, -(-rows // rule["min_rows_per_chunk"]))
    factor = rule.get("sqrt_rows_factor", 0)
    if factor > 0:
        # Balances a chunk's rows (time ~ rows / n) against the partials to fold (~ n).
        n_chunks = min(n_chunks, factor * (math.isqrt(rows - 1) + 1))
    spread = rule.get("spread_chunks", 0)
    if spread > 0 and n_chunks >= 2:
        # A small batch that needs a fold anyway spreads its rows over more CTAs.
        per_chunk = rule.get("spread_rows_per_chunk", 1)
        n_chunks = max(n_chunks, min(spread, cap, -(-rows // per_chunk)))
    return n_chunks


def _grid_x(record: Any, rows: int, sm_count: int, n_chunks: int | None) -> int:
    """Unchecked grid x (rows and sm_count already validated)."""
    rule = _field(record, "grid_rule")
    kind = rule["kind"]
    if kind == "rows_per_cta":
        grid_x = -(-rows // rule["rows_per_cta"])
        limit = rule.get("grid_limit", 0)
        if limit <= 0:
            limit = rule.get("grid_per_sm", 0) * sm_count
        if limit > 0 and grid_x > limit:
            grid_x = limit
    elif kind == "sm_scaled_bounded":
        grid_x = min(rule["ctas_per_sm"] * sm_count, rows)
    elif kind == "fixed":
        grid_x = rule["ctas"]
    elif kind == "chunk_bounded":
        if n_chunks is None:
            workspace = _workspace_rule(record)
            if workspace is None or workspace["kind"] != "fixed_chunks":
                raise ValueError(
                    f"module {_record_label(record)}: a chunk_bounded grid needs n_chunks or a "
                    "fixed_chunks workspace_rule"
                )
            n_chunks = _fixed_chunk_count(workspace, rows)
        else:
            n_chunks = _positive_int(n_chunks, "n_chunks")
        grid_x = min(n_chunks, rule["ctas_per_sm"] * sm_count)
    else:
        raise ValueError(
            f"module {_record_label(record)}: unknown grid_rule kind {kind!r}; "
            f"known: {GRID_RULE_KINDS}"
        )
    return grid_x if grid_x > 1 else 1


def launch_grid(
    record: Any,
    rows: int,
    *,
    sm_count: int,
    hidden: int | None = None,
    n_chunks: int | None = None,
) -> tuple[int, int, int]:
    """Launch grid ``(x, 1, 1)`` of one module for ``rows`` tokens on a device of ``sm_count`` SMs.

    ``chunk_bounded`` grids need the chunk count: pass ``n_chunks`` or let it be derived from
    the record's ``fixed_chunks`` workspace rule. ``hidden`` is accepted for symmetry with the
    workspace functions; no grid rule depends on it.
    """
    rows = _positive_int(rows, "rows")
    sm_count = _positive_int(sm_count, "sm_count")
    return (_grid_x(record, rows, sm_count, n_chunks), 1, 1)


def _chunking(record: Any, rule: Mapping[str, Any], rows: int, sm_count: int) -> tuple[int, int]:
    if rule["kind"] == "persistent_grid":
        n_chunks = _grid_x(record, rows, sm_count, None)
    else:
        n_chunks = _fixed_chunk_count(rule, rows)
    return n_chunks, -(-rows // n_chunks)


def chunking(
    record: Any, rows: int, *, sm_count: int, hidden: int | None = None
) -> tuple[int, int]:
    """``(n_chunks, rows_per_chunk)`` of the backward row partition for ``rows`` tokens.

    ``persistent_grid`` (upstream): ``n_chunks`` is the module's grid, so it depends on the SM
    count. ``fixed_chunks`` (first-party): a function of ``rows`` alone.
    """
    rows = _positive_int(rows, "rows")
    sm_count = _positive_int(sm_count, "sm_count")
    return _chunking(record, _chunk_rule(record), rows, sm_count)


def _max_chunks(record: Any, rule: Mapping[str, Any], sm_count: int) -> int:
    if rule["kind"] == "fixed_chunks":
        return rule["max_chunks"]
    grid = _field(record, "grid_rule")
    if grid["kind"] == "sm_scaled_bounded":
        return grid["ctas_per_sm"] * sm_count
    if grid["kind"] == "fixed":
        return grid["ctas"]
    raise ValueError(
        f"module {_record_label(record)}: grid rule {grid['kind']!r} has no bounded chunk count"
    )


def max_chunks(record: Any, *, sm_count: int) -> int:
    """Largest chunk count the record's backward partition uses on ``sm_count`` SMs."""
    sm_count = _positive_int(sm_count, "sm_count")
    return _max_chunks(record, _chunk_rule(record), sm_count)


def _capacity_layout(
    record: Any, rule: Mapping[str, Any], sm_count: int, hidden: int | None
) -> dict[str, Any]:
    capacity = _max_chunks(record, rule, sm_count)
    width = record_hidden(record, hidden)
    if rule["kind"] == "persistent_grid":
        partial_dtype = "float32"
    else:
        partial_dtype = rule.get("partial_dtype", "float64")
        if partial_dtype not in PARTIAL_DTYPE_BYTES:
            raise ValueError(
                f"module {_record_label(record)}: partial_dtype must be one of "
                f"{tuple(PARTIAL_DTYPE_BYTES)}, got {partial_dtype!r}"
            )
    partial_bytes = PARTIAL_DTYPE_BYTES[partial_dtype] * capacity * width
    counters = rule["counters"]
    counters_offset = _round_up(partial_bytes, WORKSPACE_ALIGNMENT_BYTES)
    total = counters_offset + _round_up(COUNTER_BYTES * max(counters, 1), WORKSPACE_ALIGNMENT_BYTES)
    return {
        "capacity_chunks": capacity,
        "partial_bytes": partial_bytes,
        "counters": counters,
        "counters_offset": counters_offset,
        "total_bytes": total,
        "partial_dtype": partial_dtype,
    }


def workspace_layout(
    record: Any, rows: int, *, sm_count: int, hidden: int | None = None
) -> dict[str, Any]:
    """Byte layout of the backward workspace of one module for ``rows`` tokens.

    One 256-byte aligned uint8 buffer: partials ``[capacity_chunks, hidden]`` of
    ``partial_dtype`` first, then ``counters`` uint32 completion counters at
    ``counters_offset``. Keys: ``n_chunks, rows_per_chunk, capacity_chunks, partial_bytes,
    counters, counters_offset, total_bytes, partial_dtype``. ``hidden`` is needed only by
    records whose ``hidden`` is ``None``.
    """
    rows = _positive_int(rows, "rows")
    sm_count = _positive_int(sm_count, "sm_count")
    rule = _chunk_rule(record)
    n_chunks, rows_per_chunk = _chunking(record, rule, rows, sm_count)
    layout: dict[str, Any] = {"n_chunks": n_chunks, "rows_per_chunk": rows_per_chunk}
    layout.update(_capacity_layout(record, rule, sm_count, hidden))
    return layout


def workspace_bytes(record: Any, *, sm_count: int, hidden: int | None = None) -> int:
    """Total workspace bytes of one module (independent of rows); 0 when it needs none."""
    sm_count = _positive_int(sm_count, "sm_count")
    rule = _workspace_rule(record)
    if rule is None or rule["kind"] in _NO_OWN_WORKSPACE:
        return 0
    return int(_capacity_layout(record, rule, sm_count, hidden)["total_bytes"])


def owns_workspace(record: Any) -> bool:
    """Whether the module owns its route's backward workspace (a chunked workspace rule)."""
    rule = _workspace_rule(record)
    return rule is not None and rule["kind"] not in _NO_OWN_WORKSPACE


def borrows_workspace(record: Any, rows: int) -> bool:
    """Whether a call of ``rows`` rows of the module uses its route owner's workspace."""
    rule = _workspace_rule(record)
    return rule is not None and rule["kind"] == "borrowed" and rows > rule["above_rows"]
