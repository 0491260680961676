"""Routing parity with upstream's own loader (flashinfer-python 0.7.2.post1).

Upstream's ``jit/cake_rmsnorm_train.py`` is taken from the downloaded wheel and executed with
its imports stubbed (no flashinfer, no tvm-ffi, no CUDA); its ``sm_count`` is replaced by the SM
count under test. For every arch, hidden size, kind and residual flag, SM counts 132 / 148 /
152 and every row count 1..200000, our selected modules, grid, n_chunks, rows_per_chunk and
workspace bytes must equal upstream's.

Every row is evaluated on both sides; calls go through ``map`` over ``functools.partial`` so
the Python-level loop overhead stays small. Work is deduplicated only where the compared
function provably cannot see the difference: selection does not depend on the SM count and
is evaluated once per distinct route content, a module's grid once per module (records are
shared between arches) over the rows its select rule admits. About 35 s on an idle 2-core
machine (the every-row tests are marked ``slow``; CI runs them).
"""

from __future__ import annotations

import json
from functools import partial
from operator import eq

import pytest
from package_trees import UPSTREAM_TABLE, load_upstream_loader

from miles_ext_kernels.cake import routing
from miles_ext_kernels.cake.packages import (
    UnsupportedRouteError,
    UpstreamTablePackage,
    clear_discovery_cache,
    discover_packages,
)

MAX_ROWS = 200_000
ROWS = range(1, MAX_ROWS + 1)
SM_COUNTS = (132, 148, 152)
KINDS = ("fwd", "bwd")


@pytest.fixture(scope="module")
def upstream(fi_files: dict[str, bytes]):
    """Upstream's loader module, executed from the wheel's bytes with stubbed imports."""
    return load_upstream_loader(fi_files[UPSTREAM_TABLE])


@pytest.fixture(scope="module")
def package(vendored_rmsnorm) -> UpstreamTablePackage:
    """Our adapter over the same wheel's files, vendored by the tool."""
    clear_discovery_cache()
    (found,) = discover_packages(vendored_rmsnorm, include_first_party=False)
    assert isinstance(found, UpstreamTablePackage)
    return found


def _plain(value):
    return json.loads(json.dumps(value))


def test_tables_read_without_import_equal_upstream(upstream, package):
    assert len(package.modules) == len(upstream.MODULES) == 31
    for name, raw in upstream.MODULES.items():
        assert _plain(package.modules[name].as_dict()) == _plain(raw), name
    ours_routes = {a: {k: list(v) for k, v in r.items()} for a, r in package.routes.items()}
    assert ours_routes == upstream.ROUTES
    assert dict(package.arch_by_capability) == upstream.ARCH_BY_CAPABILITY
    assert package.hidden_set == tuple(sorted(upstream.HIDDEN_SIZES))
    assert package.arches() == tuple(sorted(upstream.ARCHES))


@pytest.mark.parametrize("cc", [(10, 0), (10, 3), (10, 7), (9, 0), (12, 0), (10, 1), (8, 0)])
def test_arch_for_capability_matches(upstream, package, cc):
    assert package.arch_for_capability(cc) == upstream.arch_for_capability(cc)


def test_route_modules_match_or_both_refuse(upstream, package):
    compared = refused = 0
    for arch in upstream.ARCHES:
        for hidden in (*upstream.HIDDEN_SIZES, 4096):
            for kind in KINDS:
                for residual in (False, True):
                    try:
                        expected = upstream.route_modules(arch, hidden, kind, residual)
                    except ValueError:
                        with pytest.raises(UnsupportedRouteError) as info:
                            package.route_modules(arch, hidden, kind, residual)
                        message = str(info.value)
                        assert arch in message and "512, 2048, 6144" in message
                        assert "fwd_residual" in message and "bwd" in message
                        refused += 1
                        continue
                    assert package.route_modules(arch, hidden, kind, residual) == expected
                    compared += 1
    assert compared == 24 and refused == 24


def _routes(upstream):
    """(arch, hidden, kind, residual) of every upstream route."""
    for arch in upstream.ARCHES:
        for hidden in upstream.HIDDEN_SIZES:
            for kind in KINDS:
                for residual in (False, True):
                    if upstream.route_key(hidden, kind, residual) in upstream.ROUTES[arch]:
                        yield arch, hidden, kind, residual


def _assert_every_row(label, rows, expected_fn, ours_fn, compare=eq):
    """Compare ``expected_fn(r)`` and ``ours_fn(r)`` on every row (C-level iteration); on a
    mismatch, name the first failing row and both values."""
    if all(map(compare, map(expected_fn, rows), map(ours_fn, rows))):
        return
    for r in rows:
        expected, ours = expected_fn(r), ours_fn(r)
        if not compare(expected, ours):
            pytest.fail(f"{label}: rows={r}: upstream {expected!r}, ours {ours!r}")


class _RecordsOf(dict):
    """Upstream name tuple -> our record tuple (so comparisons are identity-fast)."""

    def __init__(self, package):
        super().__init__()
        self.modules = package.modules

    def __missing__(self, names):
        value = self[names] = tuple(self.modules[n] for n in names)
        return value


@pytest.mark.slow
def test_selected_modules_every_row(upstream, package):
    calls = list(_routes(upstream))
    assert len(calls) == 24
    distinct: dict[tuple[str, ...], tuple[str, int, str, bool]] = {}
    for call in calls:
        distinct.setdefault(upstream.route_modules(*call), call)
    records_of = _RecordsOf(package)
    for route, (arch, hidden, kind, residual) in distinct.items():
        select = partial(upstream.selected_modules, arch, hidden, kind, residual)
        _assert_every_row(
            f"selection {arch} {route}", ROWS,
            lambda r, select=select: records_of[select(rows=r)],
            partial(package.select_modules, arch, hidden, kind, residual),
        )


def _admitted_rows(record) -> range:
    rule = record.select_rule
    if rule is None:
        return ROWS
    stop = MAX_ROWS if rule["at_most"] is None else min(rule["at_most"], MAX_ROWS)
    return range(rule["above"] + 1, stop + 1)


@pytest.mark.slow
@pytest.mark.parametrize("sm_count", SM_COUNTS)
def test_launch_grid_every_row(upstream, package, sm_count):
    upstream.SM_UNDER_TEST = sm_count
    for name, record in package.modules.items():
        rows = _admitted_rows(record)
        assert len(rows) > 0
        _assert_every_row(
            f"grid {name} sm={sm_count}", rows,
            partial(upstream.launch_grid, upstream.MODULES[name], device_index=0),
            partial(routing.launch_grid, record, sm_count=sm_count),
        )


def _layout_matches(expected: dict, ours: dict) -> bool:
    return expected.items() <= ours.items() and len(ours) == len(expected) + 1


@pytest.mark.slow
@pytest.mark.parametrize("sm_count", SM_COUNTS)
def test_backward_chunking_and_workspace_every_row(upstream, package, sm_count):
    upstream.SM_UNDER_TEST = sm_count
    owners = {package.workspace_module(*call).name
              for call in _routes(upstream) if call[2] == "bwd"}
    assert len(owners) == 4
    for name in sorted(owners):
        record, raw = package.modules[name], upstream.MODULES[name]
        # n_chunks, rows_per_chunk, capacity, partial/counter offsets and total bytes
        _assert_every_row(
            f"workspace {name} sm={sm_count}", ROWS,
            partial(upstream.workspace_layout, raw, device_index=0),
            partial(routing.workspace_layout, record, sm_count=sm_count),
            compare=_layout_matches,
        )
        assert routing.workspace_layout(record, 7, sm_count=sm_count)["partial_dtype"] == (
            "float32"
        )
        for rows in (1, 2, sm_count, 2 * sm_count, 2 * sm_count + 1, 12_345, MAX_ROWS):
            expected = upstream.chunking(raw, rows, device_index=0)
            assert routing.chunking(record, rows, sm_count=sm_count) == expected
        total = upstream.workspace_layout(raw, MAX_ROWS, device_index=0)["total_bytes"]
        assert routing.workspace_bytes(record, sm_count=sm_count) == total
        assert routing.max_chunks(record, sm_count=sm_count) == upstream.max_chunks(
            raw, device_index=0
        )


def test_bwd_chunk_count_depends_on_sm_count_upstream(package):
    """The reason first-party packages exist: upstream's partition follows the SM count."""
    record = package.modules["cake_rmsnorm_train_01036297dc6e647b9e56"]
    by_sm = {sm: routing.chunking(record, 100_000, sm_count=sm) for sm in SM_COUNTS}
    assert len(set(by_sm.values())) == len(SM_COUNTS)
