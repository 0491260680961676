"""The first-party RMSNorm package: build.json is current, the launch-shape tables of spec.py and
config.h agree, and every program compiles for every architecture it lists (no GPU needed)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gen_kernel_build_json as gen
from miles_ext_kernels.cake import routing
from miles_ext_kernels.cake.packages import BuildJsonPackage, UnsupportedRouteError

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "miles_ext_kernels" / "kernels" / "rmsnorm"
SPEC = gen.load_spec(PACKAGE_DIR)

# Row counts of the header dump's latency-window lines: both edges of each element limit (written
# into CONFIG_DUMP's C++ array, so the dump and the spec's side read one list).
LATENCY_ROWS = (1, 255, 256, 257, 1024, 1025, 1365, 1366, 2048, 2049, 33026, 33027, 64527, 64528)

CONFIG_DUMP = r"""
#include <cstdio>
#include "miles_rmsnorm/backward_policy.h"
#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/forward_policy.h"
using namespace miles_rmsnorm;
static void dump(const char* kind, RowConfig c, long h) {
  std::printf("%s %ld %d %d %d %d %d %d\n", kind, h, c.vpt, c.tpr, c.block, c.groups,
              c.rows_per_group, c.rows_per_cta);
}
int main() {
  for (long h = kMinHidden; h <= kMaxHidden; h += kHiddenMultiple) {
    if (!hidden_supported(h)) return 1;
    dump("fwd", forward_config(h), h);
    dump("bwd", backward_config(h), h);
    std::printf("ring %ld %d %d %lld\n", h, forward_ring_stages(forward_config(h), false),
                forward_ring_stages(forward_config(h), true),
                static_cast<long long>(forward_ring_bytes(forward_config(h))));
    std::printf("keep %ld", h);
    const long keep_rows[] = {1, 4096, 8192, 16384, 32768, 65536, 262144};
    for (long rows : keep_rows) {
      std::printf(" %d %d %d %d %d", forward_keep_rows(rows, h, false),
                  forward_keep_rows(rows, h, true), forward_keep_ring(rows, h),
                  backward_keep_rows(rows, h, false), backward_keep_rows(rows, h, true));
    }
    std::printf("\n");
    std::printf("small_batch %ld %lld %lld\n", h,
                static_cast<long long>(forward_small_batch_rows(forward_config(h))),
                static_cast<long long>(forward_spread_rows(forward_config(h), h)));
    std::printf("latency %ld", h);
    const long latency_rows[] = {LATENCY_ROWS};
    for (long rows : latency_rows) {
      for (int form = 0; form < 8; ++form) {  // residual | FP32 weights | BF16 rows
        std::printf(" %d", forward_latency_window(rows, h, (form & 1) != 0, form & 2 ? 4 : 2,
                                                  (form & 4) != 0));
      }
    }
    std::printf("\n");
    std::printf("fixedrows %ld", h);
    const long fixed_rows[] = {1, 64, 65, 256, 257, 2048, 3072, 3073, 65536, 1L << 30,
                               (1L << 30) + 1};
    for (long rows : fixed_rows) {
      std::printf(" %d %d", forward_fixed_rows(rows, h, false), forward_fixed_rows(rows, h, true));
    }
    std::printf("\n");
    std::printf("perhead %ld %d %d %d\n", h, fixed_forward_per_head(h), fixed_forward_rows_of(h, 1),
                fixed_forward_rows_of(h, 4));
    std::printf("warprows %ld", h);
    const long warp_rows[] = {1, 3072, 3073, 16384, 1L << 30, (1L << 30) + 1};
    for (long rows : warp_rows) {
      std::printf(" %d %d", forward_warp_rows(rows, h, false), forward_warp_rows(rows, h, true));
    }
    std::printf("\n");
    std::printf("halfwarp %ld", h);
    const long half_warp_rows[] = {1, 3072, 3073, 4096, 16383, 16384, 65536};
    for (long rows : half_warp_rows) {
      for (int form = 0; form < 4; ++form) {  // residual | FP32 weights
        std::printf(" %d", forward_half_warp(rows, h, (form & 1) != 0, form & 2 ? 4 : 2));
      }
    }
    std::printf("\n");
    std::printf("split %ld", h);
    const long split_rows[] = {1, 2, 16, 17, 33, 64, 66, 67, 132, 133};
    for (long rows : split_rows) {
      for (int form = 0; form < 8; ++form) {  // residual | FP32 weights | the fixed kernel's rows
        std::printf(" %d", split_row_default(rows, h, (form & 1) != 0, form & 2 ? 4 : 2, 132,
                                             (form & 4) != 0));
      }
    }
    std::printf(" %d\n", kMaxSplitCtas);
    const RowConfig f = forward_config(h);  // the forward's thread / tpr by multiplication
    const unsigned long long magic = division_magic(f.tpr);
    for (unsigned long long n = 0; n < 1024; ++n) {
      if (((n * magic) >> 32) != n / static_cast<unsigned long long>(f.tpr)) return 3;
    }
    std::printf("large %ld", h);
    const long large_rows[] = {1, 16383, 16384, 65536};
    const long large_chunks[] = {1, 131, 132, 133, 264};
    for (long rows : large_rows) {
      for (long n : large_chunks) {
        std::printf(" %d", backward_large_block(backward_config(h), rows, n));
      }
    }
    std::printf("\n");
    const long chunk_rows[] = {1, 2, 3, 4, 5, 8, 9, 17, 33, 64, 100000};
    for (long rows : chunk_rows) {
      std::printf("chunk %ld %ld %d\n", h, rows, backward_chunk_block(backward_config(h), rows));
    }
    if (!small_backward_supported(h)) continue;
    const long row_counts[] = {1, 3, 17, 64, 129, 256};
    for (long rows : row_counts) {
      const int caps[] = {kSmallBackwardMaxCtas, kSmallBackwardPortableCtas};
      for (int cap : caps) {
        const SmallBackwardShape s = small_backward_shape(rows, h, cap);
        std::printf("small %ld %ld %d %d %d %d %d %d %d %d %d %d %d\n", h, rows, cap, s.clusters,
                    s.rows_per_cluster, s.tpr, s.row_warps, s.ctas, s.slice_warps, s.slice,
                    s.row_groups, s.rows_per_group, s.block);
      }
    }
    std::printf("rowcol %ld", h);
    const long rowcol_rows[] = {1, 7, 8, 16, 17, 32, 64, 96, 192, 193, 256, 511, 512, 1536};
    for (long rows : rowcol_rows) {
      const SmallBackwardShape s = small_backward_shape(rows, h);
      const bool clustered = row_column_clusters_default(s, rows, h);
      const bool modes[] = {clustered, false, true};
      for (bool forced : modes) {
        const RowColumnShape rc = row_column_shape(s, rows, h, forced);
        std::printf(" %d %d %d %d %d %d %d %d %d %d", row_column_default(rows), clustered,
                    rc.rows_per_cta, rc.row_ctas, rc.vectors, rc.column_ctas, rc.block,
                    rc.cluster, rc.split, row_column_wide_batch(s, rc));
      }
    }
    std::printf("\n");
  }
  std::printf("wide %lld\n", static_cast<long long>(kForwardWideRowsMinRows));
  std::printf("largeconst %lld %lld\n", static_cast<long long>(kBackwardLargeRows),
              static_cast<long long>(kBackwardLargeChunks));
  std::printf("halfwarpfixed %lld", static_cast<long long>(kFixedHalfWarpHidden));
  for (long h = 64; h <= 512; h += 8) {
    if (fixed_forward_half_warp(h, false) || fixed_forward_half_warp(h, true)) {
      std::printf(" %ld %d %d", h, fixed_forward_half_warp(h, false),
                  fixed_forward_half_warp(h, true));
    }
  }
  std::printf("\n");
  std::printf("fixed");
  for (int h : kFixedForwardHidden) {  // whole vectors a thread, rows of whole warps
    constexpr RowConfig first = forward_config(kFixedForwardHidden[0]);  // usable as a constant
    static_assert(first.tpr > 0, "forward_config is constexpr");
    const RowConfig c = forward_config(h);
    if (8 * c.vpt * c.tpr != h || c.tpr < 32 || c.tpr % 32 != 0) return 4;
    std::printf(" %d", h);
  }
  std::printf(" first %lld %lld %lld", static_cast<long long>(kFixedWeightsFirstRows),
              static_cast<long long>(kFixedWeightsFirstAllRowsHidden),
              static_cast<long long>(kFixedWeightsFirstMinRows));
  const long first_rows[] = {1, 16, 17, 767, 768, 2048};
  const long first_hidden[] = {256, 512, 1024, 8192};
  for (long h : first_hidden) {
    for (long rows : first_rows) {  // weights first, plain then residual
      std::printf(" %d %d", fixed_forward_weights_first(rows, h, false),
                  fixed_forward_weights_first(rows, h, true));
    }
  }
  std::printf("\n");
  std::printf("halves %lld %lld", static_cast<long long>(kFixedHalvesHidden),
              static_cast<long long>(kFixedHalvesMinRows));
  const long halves_rows[] = {1, 32, 33, 64, 66, 67, 74, 75};
  const long halves_hidden[] = {4096, 8192};
  const int halves_sms[] = {132, 148};
  for (long h : halves_hidden) {
    for (long rows : halves_rows) {
      for (int sms : halves_sms) {
        std::printf(" %d %d", fixed_forward_halves(rows, h, false, sms),
                    fixed_forward_halves(rows, h, true, sms));
      }
    }
  }
  std::printf("\n");
  if (hidden_supported(kMinHidden - 8) || hidden_supported(kMaxHidden + 8) ||
      hidden_supported(kMinHidden + 4)) return 2;
  return 0;
}
"""


def test_build_json_matches_its_spec_and_sources():
    committed = (PACKAGE_DIR / "build.json").read_bytes()
    assert committed == gen.render_build_json(PACKAGE_DIR), (
        "build.json is stale: run python tools/gen_kernel_build_json.py")


ROW_PROBES = (1, 2, 3, 8, 9, 16, 17, 64, 1000, 2049, 8193, 20972, 32769, 65536, 1 << 20)


def _selected(package, arch, hidden, kind, rows, residual=False):
    """The records the runtime would launch for one call (none when the route has no module)."""
    try:
        return package.select_modules(arch, hidden, kind, residual, rows)
    except UnsupportedRouteError:
        return ()


def test_every_hidden_size_and_row_count_is_served_by_exactly_one_module_per_route():
    package = BuildJsonPackage(PACKAGE_DIR / "build.json")
    for arch in package.arches():
        for kind in routing.KINDS:
            for residual in (False, True):
                for hidden in SPEC.supported_hidden_sizes():
                    for rows in ROW_PROBES:
                        served = len(_selected(package, arch, hidden, kind, rows, residual))
                        # bwd_nondet serves only its row windows (deterministic=False falls back
                        # to the deterministic route outside them); every other route serves all
                        expected = served if kind == "bwd_nondet" else 1
                        assert served == expected <= 1, (arch, kind, residual, hidden, rows)


def test_atomic_windows_follow_the_measured_policy():
    package = BuildJsonPackage(PACKAGE_DIR / "build.json")

    def atomic_serves(hidden, rows, arch="sm_80"):
        return bool(_selected(package, arch, hidden, "bwd_nondet", rows))

    for arch in ("sm_80", "sm_90a"):
        # one CTA iteration (no barrier in the deterministic program) and mid-size batches: no
        assert not atomic_serves(4096, 2, arch) and not atomic_serves(4096, 1024, arch)
        assert not atomic_serves(2048, 65536, arch) and not atomic_serves(512, 16, arch)
        # many rows where a thread holds one vector (H <= 8192): no, since step 95
        assert not atomic_serves(4096, 65536, arch) and not atomic_serves(8192, 65536, arch)
        # many rows at H > 8192 (four vectors a thread): yes, past 2^39 / H^2 rows
        assert atomic_serves(16384, 4096, arch) and atomic_serves(16384, 2049, arch)
        assert not atomic_serves(16384, 2048, arch)
        assert atomic_serves(12288, 3641, arch) and not atomic_serves(12288, 3640, arch)
        assert atomic_serves(9216, 6473, arch) and not atomic_serves(9216, 6472, arch)
    # a handful of rows past one CTA iteration: yes without clusters; with them the small-batch
    # deterministic program serves those rows faster
    assert atomic_serves(4096, 16) and not atomic_serves(4096, 16, "sm_90a")
    assert atomic_serves(16384, 16, "sm_90a")  # no small-batch program above H = 8192


def test_large_calls_take_one_cta_an_sm_on_the_h200_routes_only():
    """From BACKWARD_LARGE_ROWS rows the sm_90a routes give H 1800-2048 and 3848-4096 (backward
    CTAs of 512 threads, row groups of 256 or 512) BACKWARD_LARGE_CHUNKS chunks in 1024-thread
    CTAs; every other call, arch and hidden size keeps the other cluster arches' rule, in a
    workspace of the same size."""
    package = BuildJsonPackage(PACKAGE_DIR / "build.json")
    large_hidden = [h for h in SPEC.supported_hidden_sizes()
                    if SPEC.backward_large_hidden(SPEC.backward_config(h))]
    assert large_hidden == [*range(1800, 2049, 8), *range(3848, 4097, 8)]
    assert SPEC.BACKWARD_LARGE_ARCHES == ("sm_90a",)
    large_rows, chunks = SPEC.BACKWARD_LARGE_ROWS, SPEC.BACKWARD_LARGE_CHUNKS
    for arch, hidden, residual in itertools.product(
            package.arches(), (1536, 1800, 2048, 2056, 3840, 3848, 4096, 4104, 8192),
            (False, True)):
        owner = package.workspace_module(arch, hidden, "bwd", residual)
        reference = package.workspace_module("sm_100a", hidden, "bwd", residual)
        large = arch in SPEC.BACKWARD_LARGE_ARCHES and hidden in large_hidden
        assert ("_large" in owner.name) == large, (arch, hidden)
        assert (routing.workspace_bytes(owner, sm_count=132, hidden=hidden)
                == routing.workspace_bytes(reference, sm_count=132, hidden=hidden))
        cfg = SPEC.backward_config(hidden)
        for rows in (large_rows // 4, large_rows - 1, large_rows, 4 * large_rows):
            (record,) = _selected(package, arch, hidden, "bwd", rows, residual)
            assert record.name == owner.name
            n_chunks, rows_per_chunk = routing.chunking(record, rows, sm_count=132)
            block = SPEC.backward_large_block(cfg, rows, n_chunks)
            if large and rows >= large_rows:
                assert n_chunks == chunks and block == 1024, (arch, hidden, rows)
            else:
                assert block == 0, (arch, hidden, rows)
                assert (n_chunks, rows_per_chunk) == routing.chunking(reference, rows,
                                                                      sm_count=132)


def test_small_batch_program_takes_its_row_window_on_cluster_arches():
    package = BuildJsonPackage(PACKAGE_DIR / "build.json")
    for arch in package.arches():
        for hidden in (64, 128, 136, 256, 264, 512, 1024, 1032, 1280, 1536, 1544, 2048, 2056,
                       2560, 3072, 4096, 5120, 6144, 8192, 8200, 16384):
            above, at_most = SPEC.small_backward_window(hidden)
            for residual in (False, True):
                for rows in (1, 2, 4, 5, 8, 9, 16, 17, 20, 21, 28, 29, 31, 32, 33, 40, 41, 48, 49,
                             64, 65, 128, 129, 192, 193, 256, 257, 384, 385, 512, 513, 768,
                             769, 1024, 1025, 1536, 1537, 2048, 2049, 4096):
                    (record,) = _selected(package, arch, hidden, "bwd", rows, residual)
                    small = arch in SPEC.CLUSTER_ARCHES and above < rows <= at_most
                    assert (record.kernel == "miles_rmsnorm_bwd_small") == small, (
                        arch, hidden, rows)
                    if small:
                        ctas = SPEC.small_backward_shape(rows, hidden)["ctas"]
                        assert record.grid_rule == {"kind": "fixed", "ctas": ctas}
                        assert tuple(record.launch["cluster"]) == (ctas, 1, 1)
                        # no workspace of its own: several clusters borrow the route's
                        assert record.workspace_rule == {
                            "kind": "borrowed",
                            "above_rows": SPEC.small_single_cluster_rows(hidden)}
                        assert {"partial", "counters"} <= set(record.logical.values())
                        several = SPEC.small_backward_shape(rows, hidden)["clusters"] > 1
                        assert several == (rows > SPEC.small_single_cluster_rows(hidden))
                    else:
                        assert record.kernel == "miles_rmsnorm_bwd"
    # the measured windows: the first rows of every hidden size up to 8192, to the band's limit
    assert [SPEC.small_backward_window(h) for h in (
        64, 256, 264, 512, 520, 1024, 1032, 2048, 4096, 4104, 5120, 5128, 6144, 6152, 8192,
        8200)] == [
        (0, 1024), (0, 2048), (0, 1536), (0, 1536), (0, 1024), (0, 1024), (0, 768), (0, 768),
        (0, 768), (0, 384), (0, 384), (0, 384), (0, 384), (0, 512), (0, 512), (0, 0)]
    for hidden in range(64, 16385, 8):
        window = SPEC.small_backward_window(hidden)
        assert (window[0] == 0 and window[1] >= 16) == (SPEC.backward_config(hidden)["vpt"] == 1)


def test_a_chunk_gets_the_row_groups_its_rows_need_in_whole_warps():
    for hidden in SPEC.supported_hidden_sizes():
        c = SPEC.backward_config(hidden)
        assert SPEC.backward_chunk_block(c, 10**6) == c["block"]
        for rows in range(1, 2 * c["rows_per_cta"] + 2):
            block = SPEC.backward_chunk_block(c, rows)
            groups = block // c["tpr"]
            assert block % 32 == 0 and block % c["tpr"] == 0 and block <= c["block"]
            # enough groups for the rows, and a whole warp of idle groups at most
            assert groups * c["rows_per_group"] >= min(rows, c["rows_per_cta"])
            assert groups != 2 or block in (32, c["block"])  # two groups: measured slower
            if c["tpr"] >= 32 and rows > 4 * c["rows_per_group"]:
                assert (groups - 1) * c["rows_per_group"] < rows
    assert SPEC.backward_chunk_block(SPEC.backward_config(256), 1) == 32
    assert SPEC.backward_chunk_block(SPEC.backward_config(256), 3) == 128
    assert SPEC.backward_chunk_block(SPEC.backward_config(1024), 2) == 128
    assert SPEC.backward_chunk_block(SPEC.backward_config(64), 33) == 160


def test_row_and_column_ctas_cover_every_row_and_vector_once():
    # Row CTAs hold whole row groups of tpr threads; a column CTA gives each of its tasks (a row
    # group of a cluster block at one vector) one thread, at most the kernel's 512-task sums: of
    # every cluster block alone, of one block (its rank's) in a column cluster of a CTA a block.
    for hidden in SPEC.supported_hidden_sizes():
        _, limit = SPEC.small_backward_window(hidden)
        counts = {2, 7, 8, 17, 33, 64, 96, 100, 192, 256, limit}
        for rows in sorted(c for c in counts if 2 <= c <= limit):
            s = SPEC.small_backward_shape(rows, hidden)
            for clustered in (False, True):
                rc = SPEC.row_column_shape(rows, hidden, clustered)
                cluster = rc["cluster"]
                assert cluster == (s["clusters"] if clustered else 1)
                assert cluster <= SPEC.SMALL_PORTABLE_CTAS
                assert rc["block"] <= 1024 and rc["block"] % 32 == 0
                assert rc["rows_per_cta"] * s["tpr"] == rc["block"]
                assert rc["row_ctas"] % cluster == 0 and rc["column_ctas"] % cluster == 0
                assert (rc["row_ctas"] - cluster) * rc["rows_per_cta"] < rows <= (
                    rc["row_ctas"] * rc["rows_per_cta"])
                blocks_a_cta = s["clusters"] if cluster == 1 else 1
                assert rc["split"] in (1, SPEC.ROW_COLUMN_WIDE_SPLIT)
                if rc["split"] > 1:  # only the wide instance's tasks split a vector, up to H 512
                    assert SPEC.row_column_wide_batch(rows, hidden, clustered)
                    assert hidden <= SPEC.ROW_COLUMN_WIDE_SPLIT_MAX_HIDDEN
                    assert 8 % rc["split"] == 0
                tasks = blocks_a_cta * s["row_groups"] * rc["vectors"] * rc["split"]
                assert rc["vectors"] >= 1 and tasks <= min(rc["block"], SPEC.SMALL_MAX_BLOCK)
                column_groups = rc["column_ctas"] // cluster
                assert (column_groups - 1) * rc["vectors"] < hidden // 8 <= (
                    column_groups * rc["vectors"])
            assert SPEC.row_column_shape(rows, hidden) == SPEC.row_column_shape(
                rows, hidden, SPEC.row_column_clusters_default(rows, hidden))
    assert not SPEC.row_column_default(7) and SPEC.row_column_default(8)
    assert SPEC.row_column_default(256) and not SPEC.row_column_default(1)


def test_small_batch_shapes_cover_a_row_once_and_fit_a_cta():
    assert (SPEC.SMALL_PORTABLE_CTAS, SPEC.SMALL_MAX_CTAS) == (8, 16)
    for hidden in range(64, 8193, 8):
        c = SPEC.backward_config(hidden)
        for rows, cap in itertools.product((1, 2, 3, 5, 16, 17, 64, 100, 128, 193, 256),
                                           (16, 8)):
            s = SPEC.small_backward_shape(rows, hidden, cap)
            assert 1 <= s["ctas"] <= cap and s["block"] <= 512 and s["row_groups"] <= 16
            # the row groups (dw's partition) are the portable cluster's at every cluster size
            portable = SPEC.small_backward_shape(rows, hidden, 8)
            assert (s["row_groups"], s["rows_per_group"]) == (
                portable["row_groups"], portable["rows_per_group"])
            # the CTAs' slices hold every warp of a row, and no CTA is without one
            assert s["ctas"] * s["slice_warps"] >= s["row_warps"] > (s["ctas"] - 1) * s[
                "slice_warps"]
            assert s["slice"] == (s["slice_warps"] * 32 if c["tpr"] > 32 else c["tpr"])
            # a batch's warp partials fit the kernel's exchange buffer (16 warps x 8 portable CTAs)
            if s["row_warps"] > 1:
                assert s["row_groups"] * s["row_warps"] <= 128, (hidden, rows, s)
            # the clusters cover the rows in contiguous blocks, none empty, and are the same at
            # every cluster size (dw's fold)
            assert (s["clusters"], s["rows_per_cluster"]) == (
                portable["clusters"], portable["rows_per_cluster"])
            assert (s["clusters"] - 1) * s["rows_per_cluster"] < rows
            assert s["clusters"] * s["rows_per_cluster"] >= rows
            # one cluster while a CTA of the 16-CTA split moves at most 48 KB of g, x and dx
            wide = SPEC.small_backward_shape(rows, hidden, 16)
            cta_bytes = 6 * rows * wide["slice"] * 8
            if cta_bytes <= SPEC.SMALL_CLUSTER_BYTES:
                assert s["clusters"] == 1
            else:  # one a SMALL_CLUSTER_ROWS rows, at most SMALL_MAX_CLUSTERS (128 CTAs)
                assert s["clusters"] == min(-(-rows // SPEC.SMALL_CLUSTER_ROWS),
                                            SPEC.SMALL_MAX_CLUSTERS)
                assert s["clusters"] * wide["ctas"] <= 128
            # a cluster's row groups cover its rows in contiguous blocks, none empty
            block = s["rows_per_cluster"]
            assert (s["row_groups"] - 1) * s["rows_per_group"] < block
            assert s["row_groups"] * s["rows_per_group"] >= block


ROW_DIVISION_CHECK = r"""
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
#include "miles_rmsnorm/config.h"
using namespace miles_rmsnorm;
int main() {
  std::mt19937_64 rng(7);
  long long checked = 0, wrong = 0;
  auto check = [&](int64_t d, uint32_t n) {
    ++checked;
    if (divide_row(n, row_division(d)) != n / static_cast<uint32_t>(d)) {
      if (++wrong <= 5) std::printf("wrong %lld %u\n", static_cast<long long>(d), n);
    }
  };
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int s = 12; s <= 31; ++s) {
    for (int64_t d : {(INT64_C(1) << s) - 1, INT64_C(1) << s, (INT64_C(1) << s) + 1}) {
      if (d < (INT64_C(1) << 31)) divisors.push_back(d);
    }
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + static_cast<int64_t>(rng() % 0x7fffffff));
  const uint32_t top = 0x7fffffffu;  // rows below 2^31
  for (int64_t d : divisors) {
    const uint32_t ud = static_cast<uint32_t>(d);
    const uint32_t last = top - top % ud;  // the last multiple of d in range
    for (uint32_t n : {0u, 1u, ud - 1, ud, ud + 1, top, top - 1, last, last - 1}) {
      if (n <= top) check(d, n);
    }
    for (int i = 0; i < 200; ++i) check(d, static_cast<uint32_t>(rng() & top));
    for (int i = 0; i < 50; ++i) {  // either side of multiples of d
      const uint64_t q = rng() % (top / ud + 1);
      const uint64_t m = q * ud;
      if (m <= top) check(d, static_cast<uint32_t>(m));
      if (m >= 1 && m - 1 <= top) check(d, static_cast<uint32_t>(m - 1));
    }
  }
  for (uint32_t n = 0; n < (1u << 20); ++n) check(24, n);  // the harness's 24 heads, densely
  const RowDivision none = row_division(0), wide = row_division(INT64_C(1) << 31);
  std::printf("checked %lld wrong %lld outside %u %u %u %u\n", checked, wrong, none.magic,
              none.shift, wide.magic, wide.shift);
}
"""


NEEDS_GXX = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def _run_host_program(tmp_path, name: str, source: str, *flags: str) -> str:
    """Compiles ``source`` (C++17, the package's include directory) as ``name`` in ``tmp_path``,
    runs it and returns its standard output: how the host-side policies are checked as built."""
    path = tmp_path / f"{name}.cpp"
    path.write_text(source)
    exe = tmp_path / name
    subprocess.run(["g++", "-std=c++17", *flags, "-I", str(PACKAGE_DIR / "include"), str(path),
                    "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


@NEEDS_GXX
def test_row_division_divides_every_row_index_exactly(tmp_path):
    """config.h's row_division / divide_row (the fixed forward kernels' per-head addressing) give
    n / d for rows below 2^31 at every divisor checked: all up to 4096, both sides of each power
    of two up to 2^31, 2000 random ones, each at the range's edges, next to its multiples and at
    random rows; a divisor outside [1, 2^31) gets no division."""
    out = _run_host_program(tmp_path, "division", ROW_DIVISION_CHECK, "-O2").split()
    assert out[0] == "checked" and int(out[1]) > 2_000_000, out
    assert out[2:4] == ["wrong", "0"], out
    assert out[4:] == ["outside", "0", "0", "0", "0"], out


WAVE_GRID_DUMP = r"""
#include <cstdio>
#include "miles_rmsnorm/backward_policy.h"
int main() {
  const long chunks[] = {1, 2, 131, 132, 133, 264};
  for (long n : chunks) {
    for (unsigned resident = 1; resident <= 300; ++resident) {
      for (int per_sm = 1; per_sm <= 2; ++per_sm) {
        const unsigned asked[] = {1, 33, 66, 114, 132, static_cast<unsigned>(n)};
        for (unsigned grid : asked) {
          if (grid > n) continue;
          std::printf("%ld %u %d %u %u\n", n, resident, per_sm, grid,
                      miles_rmsnorm::backward_wave_grid(grid, n, resident, per_sm));
        }
      }
    }
  }
}
"""


@NEEDS_GXX
def test_backward_grid_runs_chunks_in_balanced_waves(tmp_path):
    """backward_policy.h's backward_wave_grid: never more CTAs than asked or resident; where one
    CTA fills an SM and the chunks outnumber the resident CTAs, the fewest CTAs that keep the
    waves the resident grid needs (every CTA ceil(chunks / resident) chunks or one fewer);
    otherwise the grid as asked, at most the resident CTAs."""
    rows = [tuple(map(int, line.split()))
            for line in _run_host_program(tmp_path, "waves", WAVE_GRID_DUMP).splitlines()]
    got = {row[:4]: row[4] for row in rows}
    assert len(got) > 3000 and all(got[row[:4]] == row[4] for row in rows)
    for (chunks, resident, per_sm, asked), grid in got.items():
        assert 1 <= grid <= min(asked, resident), (chunks, resident, per_sm, asked, grid)
        if per_sm == 1 and chunks > resident and asked == chunks:
            waves = -(-chunks // resident)
            assert -(-chunks // grid) == waves, (chunks, resident, grid)
            assert grid == 1 or -(-chunks // (grid - 1)) > waves, (chunks, resident, grid)
        elif per_sm == 1 and chunks > resident:
            assert grid == min(asked, -(-chunks // -(-chunks // resident)))
        else:
            assert grid == min(asked, resident)
    # 132 chunks (one CTA an SM): A100 (108 SMs), H100 PCIe (114) and H20 (78) run 66 CTAs of
    # two chunks; a 46-SM GPU 44 of three; the 132-SM H100 / H200 one CTA a chunk
    assert [got[(132, sms, 1, 132)] for sms in (132, 114, 108, 78, 66, 46)] == \
        [132, 66, 66, 66, 66, 44]
    assert got[(264, 228, 2, 264)] == 228 and got[(132, 114, 1, 33)] == 33


RING_DEPTH_DUMP = r"""
#include <cstdio>
#include "miles_rmsnorm/backward_policy.h"
int main() {
  const int blocks[] = {256, 512, 768, 992, 1024};
  const long rows[] = {1, 16383, 16384, 65536};
  for (int block : blocks) {
    for (long r : rows) {
      std::printf("%d %ld %d\n", block, r, miles_rmsnorm::backward_max_stages(block, r));
    }
  }
}
"""


@NEEDS_GXX
def test_backward_ring_depth_policy(tmp_path):
    """backward_policy.h's backward_max_stages: two stages for 1024-thread CTAs from
    BACKWARD_LARGE_ROWS rows (step 101), three for every other CTA and row count."""
    out = _run_host_program(tmp_path, "stages", RING_DEPTH_DUMP)
    got = {(int(b), int(r)): int(d) for b, r, d in (line.split() for line in out.splitlines())}
    assert len(got) == 20
    assert {key for key, depth in got.items() if depth == 2} == {
        (1024, SPEC.BACKWARD_LARGE_ROWS), (1024, 65536)}
    assert set(got.values()) == {2, 3}


PACE_DUMP = r"""
#include <cstdio>
#include "miles_rmsnorm/backward_policy.h"
#include "miles_rmsnorm/config.h"
using namespace miles_rmsnorm;
// The binding's block for a call of `rows` rows in `chunks` chunks, and backward_pace for it.
static bool paced(long h, long rows, long chunks, unsigned grid, long heads, bool residual) {
  const RowConfig c = backward_config(h);
  const long per_chunk = (rows + chunks - 1) / chunks;
  const int large = backward_large_block(c, rows, chunks);
  const int block = large > 0 ? large : backward_chunk_block(c, per_chunk);
  return backward_pace(c.vpt, block, c.tpr, heads, residual, chunks, grid, per_chunk);
}
int main() {
  const long hidden[] = {1536, 2048, 4096, 5120, 6144, 7936, 7944, 8192, 12288};
  const long rows[] = {4096, 6072, 6073, 8192, 16383, 16384, 24288, 24289, 65536, 1048576};
  for (long h : hidden) {
    for (long r : rows) {
      std::printf("%ld %ld %d %d %d %d %d\n", h, r, paced(h, r, 132, 132, 1, false),
                  paced(h, r, 132, 131, 1, false), paced(h, r, 132, 132, 1, true),
                  paced(h, r, 132, 132, 4, false), paced(h, r, 1, 1, 1, false));
    }
  }
}
"""


@NEEDS_GXX
def test_backward_pacing_policy(tmp_path):
    """backward_policy.h's backward_pace, for the binding's CTA of each call: only one-vector CTAs
    of 1024 threads (H 2048 and 4096 from BACKWARD_LARGE_ROWS rows, H 7944-8192 always) whose
    largest chunk runs at least 24 iterations of their row groups, with one CTA a chunk of two or
    more, contiguous rows and no residual; never with a CTA short of the chunks, per-head rows,
    the residual form or one chunk."""
    out = _run_host_program(tmp_path, "pace", PACE_DUMP)
    got = {(int(h), int(r)): tuple(map(int, rest))
           for h, r, *rest in (line.split() for line in out.splitlines())}
    assert len(got) == 90
    assert {key for key, flags in got.items() if flags[0]} == {
        (2048, r) for r in (24289, 65536, 1048576)} | {
        (4096, r) for r in (16384, 24288, 24289, 65536, 1048576)} | {
        (h, r) for h in (7944, 8192) for r in (6073, 8192, 16383, 16384, 24288, 24289, 65536,
                                                1048576)}
    assert all(flags[1:] == (0, 0, 0, 0) for flags in got.values())
    for (h, r), flags in got.items():  # spec.backward_pace mirrors it (the GPU test reads it)
        cfg = SPEC.backward_config(h)
        per_chunk = -(-r // 132)
        block = SPEC.backward_large_block(cfg, r, 132) or SPEC.backward_chunk_block(cfg, per_chunk)
        assert flags[0] == SPEC.backward_pace(cfg["vpt"], block, cfg["tpr"], 1, False, 132, 132,
                                              per_chunk), (h, r)
        assert not SPEC.backward_pace(cfg["vpt"], block, cfg["tpr"], 1, False, 132, 131,
                                      per_chunk)


PARAM_OFFSETS_DUMP = r"""
#include <cstddef>
#include <cstdio>
#include "miles_rmsnorm/params.h"
using miles_rmsnorm::BackwardParams;
using miles_rmsnorm::ForwardParams;
#define FIELD(T, f) std::printf("%s %s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(T::f))
int main() {
  FIELD(ForwardParams, x); FIELD(ForwardParams, w); FIELD(ForwardParams, y);
  FIELD(ForwardParams, rstd); FIELD(ForwardParams, eps); FIELD(ForwardParams, flags);
  FIELD(ForwardParams, x_addr); FIELD(ForwardParams, rows); FIELD(ForwardParams, hidden);
  FIELD(ForwardParams, heads); FIELD(ForwardParams, u); FIELD(ForwardParams, h_new);
  FIELD(ForwardParams, u_addr); FIELD(ForwardParams, tpr); FIELD(ForwardParams, groups);
  FIELD(ForwardParams, group_magic); FIELD(ForwardParams, head_magic);
  FIELD(ForwardParams, head_shift);
  FIELD(BackwardParams, g); FIELD(BackwardParams, x); FIELD(BackwardParams, w);
  FIELD(BackwardParams, rstd); FIELD(BackwardParams, dx); FIELD(BackwardParams, dw);
  FIELD(BackwardParams, g_h); FIELD(BackwardParams, rows); FIELD(BackwardParams, hidden);
  FIELD(BackwardParams, flags);
}
"""

# Where sm_90 puts a kernel's parameters in constant bank 0, and the bank's line (bytes).
PARAM_BASE = 0x210
CONSTANT_LINE = 64


@NEEDS_GXX
def test_kernel_parameters_sit_in_the_lines_a_small_call_reads(tmp_path):
    """params.h's field order (docs/kernels.md steps 89 and 102): a plain one-row call of
    forward_fixed_kernel reads x, w, y, rstd, eps and x's row stride, all in the parameters' first
    64-byte constant line; the residual form's u, h_new and u's row stride share the second; a
    one-row backward call's pointers, row count, hidden size and flags lie in the first two."""
    fields = {}
    for line in _run_host_program(tmp_path, "offsets", PARAM_OFFSETS_DUMP).splitlines():
        struct, name, offset, size = line.split()
        fields[(struct, name)] = (PARAM_BASE + int(offset), int(size))

    def line_of(struct: str, name: str, size: int | None = None) -> int:
        start, whole = fields[(struct, name)]
        end = start + (size or whole) - 1
        assert start // CONSTANT_LINE == end // CONSTANT_LINE, (struct, name, start, end)
        return start // CONSTANT_LINE

    first = PARAM_BASE // CONSTANT_LINE
    for name in ("x", "w", "y", "rstd", "eps"):
        assert line_of("ForwardParams", name) == first, name
    assert line_of("ForwardParams", "x_addr", size=8) == first  # its stride
    for name in ("u", "h_new"):
        assert line_of("ForwardParams", name) == first + 1, name
    assert line_of("ForwardParams", "u_addr", size=8) == first + 1
    for name in ("g", "x", "w", "rstd", "dx", "dw", "g_h", "rows", "hidden", "flags"):
        assert line_of("BackwardParams", name) in (first, first + 1), name


@NEEDS_GXX
def test_config_header_and_spec_tables_agree(tmp_path):
    source = CONFIG_DUMP.replace("{LATENCY_ROWS}", "{" + ", ".join(map(str, LATENCY_ROWS)) + "}")
    lines = _run_host_program(tmp_path, "dump", source).splitlines()
    small = [line for line in lines if line.startswith("small ")]
    served = [h for h in SPEC.supported_hidden_sizes() if SPEC.backward_config(h)["vpt"] == 1]
    assert len(small) == 12 * len(served) and served[-1] == 8192
    chunk = [line for line in lines if line.startswith("chunk ")]
    assert len(chunk) == 11 * len(SPEC.supported_hidden_sizes())
    rowcol = [line for line in lines if line.startswith("rowcol ")]
    assert len(rowcol) == len(served)
    assert len(lines) == (12 * len(SPEC.supported_hidden_sizes()) + len(small) + len(chunk)
                          + len(rowcol) + 5)
    # a half-warp a row: plain rows of one warp (H 136-256) past the spread window (3072 rows at
    # H = 256), FP32 weights from FORWARD_WIDE_ROWS_MIN_ROWS rows
    assert SPEC.forward_half_warp(3073, 256, False, 2)
    assert SPEC.forward_half_warp(16384, 136, False, 4)
    assert not SPEC.forward_half_warp(3072, 256, False, 2)
    assert not SPEC.forward_half_warp(16383, 256, False, 4)
    assert not SPEC.forward_half_warp(65536, 256, True, 2)
    assert not SPEC.forward_half_warp(65536, 128, False, 2)
    assert not SPEC.forward_half_warp(65536, 264, False, 2)
    # the latency window: H 1024-8192 up to 2^21 elements (2048 rows at 1024, 1365 at 1536),
    # H 520-1016 (rows of two warps) up to 2^25 with a residual or FP32 weights
    assert SPEC.forward_latency_window(2048, 1024, True, 2, True)
    assert not SPEC.forward_latency_window(2049, 1024, True, 2, True)
    assert SPEC.forward_latency_window(1365, 1536, False, 2, True)
    assert not SPEC.forward_latency_window(1365, 1536, False, 2, False)  # FP16 rows, BF16 weights
    assert SPEC.forward_latency_window(33026, 1016, True, 4, True)
    assert not SPEC.forward_latency_window(33027, 1016, True, 4, True)
    assert SPEC.forward_latency_window(64527, 520, False, 4, False)
    assert not SPEC.forward_latency_window(64528, 520, True, 2, True)
    assert not SPEC.forward_latency_window(2048, 896, False, 2, True)  # no fixed instance
    assert not SPEC.forward_latency_window(2048, 512, True, 4, True)
    # the fixed kernel with 8 rows of one warp a CTA: H 256 and 512 from 65 rows, the plain form
    # up to the spread window (3072 rows)
    assert SPEC.forward_fixed_rows(65, 256, False) and SPEC.forward_fixed_rows(3072, 512, False)
    assert not SPEC.forward_fixed_rows(64, 256, True)
    assert not SPEC.forward_fixed_rows(3073, 256, False)
    assert SPEC.forward_fixed_rows(65536, 512, True)
    assert not SPEC.forward_fixed_rows(2048, 1024, True)  # rows of two warps
    assert not SPEC.forward_fixed_rows(2048, 248, True)  # no fixed instance
    per_head = [h for h in SPEC.supported_hidden_sizes() if SPEC.fixed_forward_per_head(h)]
    assert per_head == [256, 512]
    assert [h for h in SPEC.supported_hidden_sizes()
            if SPEC.fixed_forward_rows_of(h, 1)] == list(SPEC.FORWARD_FIXED_HIDDEN)
    assert [h for h in SPEC.supported_hidden_sizes()
            if SPEC.fixed_forward_rows_of(h, 8)] == [256, 512]
    halves = [int(SPEC.fixed_forward_halves(rows, hidden, residual, sms))
              for hidden in (4096, 8192) for rows in (1, 32, 33, 64, 66, 67, 74, 75)
              for sms in (132, 148) for residual in (False, True)]
    assert sum(halves) == 8  # plain, 8192: 33, 64, 66 rows on 132 SMs; those, 67, 74 on 148
    assert lines.pop() == " ".join(
        ["halves", str(SPEC.FORWARD_FIXED_HALVES_HIDDEN), str(SPEC.FORWARD_FIXED_HALVES_MIN_ROWS),
         *map(str, halves)])
    first = [int(SPEC.fixed_forward_weights_first(rows, hidden, residual))
             for hidden in (256, 512, 1024, 8192) for rows in (1, 16, 17, 767, 768, 2048)
             for residual in (False, True)]
    # rows of one warp: always; else up to 16 and from 768 rows, the residual form always
    assert first == [1] * 24 + [1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1] * 2
    assert lines.pop() == " ".join(
        ["fixed", *map(str, SPEC.FORWARD_FIXED_HIDDEN),
         "first", str(SPEC.FORWARD_FIXED_WEIGHTS_FIRST_ROWS),
         str(SPEC.FORWARD_FIXED_WEIGHTS_FIRST_ALL_ROWS_HIDDEN),
         str(SPEC.FORWARD_FIXED_WEIGHTS_FIRST_MIN_ROWS), *map(str, first)])
    half = SPEC.FORWARD_FIXED_HALF_WARP_HIDDEN
    assert SPEC.forward_config(half)["tpr"] == 16 and SPEC.forward_config(half)["vpt"] == 1
    flags = [f"{h} {int(SPEC.fixed_forward_half_warp(h, False))} "
             f"{int(SPEC.fixed_forward_half_warp(h, True))}" for h in range(64, 513, 8)
             if SPEC.fixed_forward_half_warp(h, False) or SPEC.fixed_forward_half_warp(h, True)]
    assert flags == [f"{half} 1 0"]
    assert lines.pop() == " ".join(["halfwarpfixed", str(half), *flags])
    assert lines.pop() == f"largeconst {SPEC.BACKWARD_LARGE_ROWS} {SPEC.BACKWARD_LARGE_CHUNKS}"
    assert lines.pop() == f"wide {SPEC.FORWARD_WIDE_ROWS_MIN_ROWS}"
    keys = ("vpt", "tpr", "block", "groups", "rows_per_group", "rows_per_cta")
    small_keys = ("clusters", "rows_per_cluster", "tpr", "row_warps", "ctas", "slice_warps",
                  "slice", "row_groups", "rows_per_group", "block")
    for line in lines:
        kind, hidden, *numbers = line.split()
        if kind == "ring":
            config = SPEC.forward_config(int(hidden))
            want = (SPEC.forward_ring_stages(config, False), SPEC.forward_ring_stages(config, True),
                    SPEC.forward_ring_bytes(config))
            assert tuple(map(int, numbers)) == want, line
            continue
        if kind == "keep":  # streaming calls that take the evict_last instances
            want = [int(keep) for rows in (1, 4096, 8192, 16384, 32768, 65536, 262144)
                    for keep in (SPEC.forward_keep_rows(rows, int(hidden), False),
                                 SPEC.forward_keep_rows(rows, int(hidden), True),
                                 SPEC.forward_keep_ring(rows, int(hidden)),
                                 SPEC.backward_keep_rows(rows, int(hidden), False),
                                 SPEC.backward_keep_rows(rows, int(hidden), True))]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "small_batch":  # small and large batches as the launcher tells them apart
            config = SPEC.forward_config(int(hidden))
            assert int(numbers[0]) == SPEC.forward_small_batch_rows(config)
            assert int(numbers[1]) == SPEC.forward_spread_rows(config, int(hidden)), line
            continue
        if kind == "latency":  # calls past the spread window that keep the small-batch instance
            want = [int(SPEC.forward_latency_window(rows, int(hidden), bool(form & 1),
                                                    4 if form & 2 else 2, bool(form & 4)))
                    for rows in LATENCY_ROWS for form in range(8)]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "fixedrows":  # BF16 rows of one warp: the fixed kernel, 8 rows a CTA
            want = [int(SPEC.forward_fixed_rows(rows, int(hidden), residual))
                    for rows in (1, 64, 65, 256, 257, 2048, 3072, 3073, 65536, 1 << 30,
                                 (1 << 30) + 1)
                    for residual in (False, True)]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "perhead":  # per-head views through the fixed kernels; rows the fixed kernel
            h = int(hidden)     # takes with one head and with four
            assert list(map(int, numbers)) == [int(SPEC.fixed_forward_per_head(h)),
                                               int(SPEC.fixed_forward_rows_of(h, 1)),
                                               int(SPEC.fixed_forward_rows_of(h, 4))], line
            continue
        if kind == "warprows":  # BF16 rows of one warp past the spread window: 4 / vpt a warp
            want = [int(SPEC.forward_warp_rows(rows, int(hidden), residual))
                    for rows in (1, 3072, 3073, 16384, 1 << 30, (1 << 30) + 1)
                    for residual in (False, True)]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "halfwarp":  # calls past the spread window that take a half-warp a row
            want = [int(SPEC.forward_half_warp(rows, int(hidden), bool(form & 1),
                                               4 if form & 2 else 2))
                    for rows in (1, 3072, 3073, 4096, 16383, 16384, 65536) for form in range(4)]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "split":  # CTAs a small batch's row is split over on a 132-SM GPU
            *counts, most = map(int, numbers)
            want = [SPEC.split_row_default(rows, int(hidden), bool(form & 1),
                                           4 if form & 2 else 2, 132, fixed_kernel=bool(form & 4))
                    for rows in (1, 2, 16, 17, 33, 64, 66, 67, 132, 133) for form in range(8)]
            assert counts == want and most == SPEC.FORWARD_SPLIT_MAX_CTAS, line
            continue
        if kind == "large":  # one 1024-thread CTA an SM for the large calls' chunks
            want = [SPEC.backward_large_block(SPEC.backward_config(int(hidden)), rows, n)
                    for rows in (1, 16383, 16384, 65536) for n in (1, 131, 132, 133, 264)]
            assert list(map(int, numbers)) == want, line
            continue
        if kind == "chunk":  # the CTA a chunk of `rows` rows gets
            rows, block = map(int, numbers)
            assert block == SPEC.backward_chunk_block(SPEC.backward_config(int(hidden)), rows)
            continue
        if kind == "rowcol":  # the row and column CTAs: where they run, and their launch
            rc_keys = ("rows_per_cta", "row_ctas", "vectors", "column_ctas", "block", "cluster",
                       "split")
            values = list(map(int, numbers))
            at = 0
            for rows in (1, 7, 8, 16, 17, 32, 64, 96, 192, 193, 256, 511, 512, 1536):
                for clustered in (None, False, True):  # the default, then forced off and on
                    default, clusters_default, *shape, wide = values[at:at + 10]
                    at += 10
                    assert default == int(SPEC.row_column_default(rows)), (line, rows)
                    assert clusters_default == int(
                        SPEC.row_column_clusters_default(rows, int(hidden))), (line, rows)
                    want = SPEC.row_column_shape(rows, int(hidden), clustered)
                    assert dict(zip(rc_keys, shape, strict=True)) == want, (line, rows)
                    assert wide == int(SPEC.row_column_wide_batch(rows, int(hidden), clustered))
            assert len(values) == at == 14 * 3 * 10, line
            continue
        if kind == "small":  # the 16-CTA cluster and the portable one
            rows, cap, *numbers = numbers
            shape = SPEC.small_backward_shape(int(rows), int(hidden), int(cap))
            assert dict(zip(small_keys, map(int, numbers), strict=True)) == shape, line
            continue
        config = (SPEC.forward_config if kind == "fwd" else SPEC.backward_config)(int(hidden))
        assert dict(zip(keys, map(int, numbers), strict=True)) == config, line


@pytest.mark.parametrize("kind", ["fwd", "bwd"])
def test_row_groups_leave_fewer_than_a_warp_of_threads_idle(kind):
    config_of = SPEC.forward_config if kind == "fwd" else SPEC.backward_config
    for hidden in SPEC.supported_hidden_sizes():
        c = config_of(hidden)
        slots = -(-hidden // (8 * c["vpt"]))  # 16-byte vectors a thread-slot covers
        assert c["tpr"] >= slots, (hidden, c)
        if c["tpr"] > 32:
            assert c["tpr"] % 32 == 0 and c["tpr"] - slots < 32, (hidden, c)
        else:
            assert c["tpr"] & (c["tpr"] - 1) == 0, (hidden, c)  # shuffle groups of 2^k lanes
        assert c["block"] <= 1024 and c["block"] == c["groups"] * c["tpr"], (hidden, c)


def test_forward_latency_window_rows_ends_the_windows_prefix():
    # forward_latency_window_rows (the GPU tests' edge of the window) is the last row count of the
    # window, which holds every smaller count, for every hidden size and form
    for hidden in SPEC.supported_hidden_sizes():
        for residual, weight_bytes, bf16_rows in itertools.product((False, True), (2, 4),
                                                                   (False, True)):
            form = (hidden, residual, weight_bytes, bf16_rows)
            most = SPEC.forward_latency_window_rows(*form)
            assert not SPEC.forward_latency_window(most + 1, *form), form
            for rows in ({1, most // 2, most} if most else ()):
                assert SPEC.forward_latency_window(rows, *form), (rows, form)
    assert SPEC.forward_latency_window_rows(896, True, 2, True) == (1 << 25) // 896
    assert SPEC.forward_latency_window_rows(6144, True, 2, True) == 1024  # thread-bound rows
    assert SPEC.forward_latency_window_rows(896, False, 2, True) == 0  # no fixed instance


def test_forward_spread_window_and_small_batches():
    # the spread window (a row group per row): 384 CTAs' worth of rows, at most 4096, up to
    # H = 8192; the small batches inside it, 128 CTAs' worth (config.h mirrors those)
    expected = {64: 4096, 128: 4096, 256: 3072, 512: 3072, 1024: 1536, 2048: 768, 4096: 384,
                8192: 384, 8200: 128, 16384: 128}
    for hidden, rows in expected.items():
        assert SPEC.forward_spread_rows(SPEC.forward_config(hidden), hidden) == rows, hidden
    for hidden in SPEC.supported_hidden_sizes():
        config = SPEC.forward_config(hidden)
        small = SPEC.forward_small_batch_rows(config)
        assert small == 128 * config["groups"] <= SPEC.forward_spread_rows(config, hidden)


def _past_window(routes: list[str]) -> list[str]:
    return [n for n in routes if "_t" not in n.rsplit("__h", 1)[1]]


def test_plain_forward_gives_every_row_a_group_between_128_and_8192():
    """Past the spread window the plain form of 136..8192 takes its `_rows` records (a row
    group per row at every T: the loop-free kernel; 520..8192 before session 32); the residual
    form never does and keeps a CTA per rows_per_cta rows up to 8192 (its own `_residual`
    records above 4096)."""
    build = json.loads((PACKAGE_DIR / "build.json").read_text())
    for arch, routes in build["routes"].items():
        rows = [n for n in _past_window(routes["fwd"]) if n.endswith("_rows")]
        hidden = [int(n.split("__h")[1].removesuffix("_rows")) for n in rows]
        assert hidden[:2] == [256, 512] and hidden[-1] == 8192 and 128 not in hidden, arch
        assert not [n for n in routes["fwd_residual"] if n.endswith("_rows")], arch
        for name in rows:
            record = build["modules"][name]
            config = SPEC.forward_config(record["hidden_rule"]["max"])
            assert record["hidden_rule"]["min"] > 128
            assert record["grid_rule"]["rows_per_cta"] == config["groups"], name
            assert record["grid_rule"]["grid_limit"] == 2**31 - 1, name
            top = record["hidden_rule"]["max"]
            assert record["select_rule"]["above"] == SPEC.forward_spread_rows(config, top), name
        residual = _past_window(routes["fwd_residual"])
        for name in residual:
            record = build["modules"][name]
            top = record["hidden_rule"]["max"]
            assert record["grid_rule"]["rows_per_cta"] == SPEC.forward_config(top)["rows_per_cta"]
            full = 512 < record["hidden_rule"]["min"] and top <= 8192
            assert (record["grid_rule"]["grid_per_sm"] == 0) == full, name
            assert name.endswith("_residual") == (4096 < top <= 8192), name
            # the records it shares with the plain form lie outside 136..8192
            assert (name in routes["fwd"]) == (not 128 < top <= 8192), name


def test_ring_forward_only_where_registers_bound_the_bytes_in_flight():
    ring = {h for h in SPEC.supported_hidden_sizes()
            if SPEC.forward_ring_stages(SPEC.forward_config(h), residual=False)}
    assert {5632, 6144, 10240, 12288} <= ring
    assert not ring & {2048, 4096, 5120, 8192, 16384}  # an SM holds 1024 plain threads there
    assert min(ring) == 5128 and max(ring) == 12288
    for hidden in SPEC.supported_hidden_sizes():
        config = SPEC.forward_config(hidden)
        assert SPEC.forward_ring_stages(config, residual=True) == 0
        if hidden in ring:  # fits an H100 / H200 CTA (227 KB opt-in, 512 B of static scratch)
            assert SPEC.forward_ring_bytes(config) <= 227 * 1024 - 512, hidden


def test_grid_rules_use_the_rows_a_cta_covers():
    build = json.loads((PACKAGE_DIR / "build.json").read_text())
    for name, record in build["modules"].items():
        hidden = record["hidden_rule"]["max"]
        config_of = SPEC.forward_config if record["role"] == "fwd" else SPEC.backward_config
        span = range(record["hidden_rule"]["min"], hidden + 1, 8)
        assert len({config_of(h)["rows_per_cta"] for h in span}) == 1, name  # one shape a module
        if record["role"] == "fwd":
            # up to forward_spread_rows a row group per row (one group's rows per CTA), then two
            config = SPEC.forward_config(hidden)
            spread = SPEC.forward_spread_rows(config, hidden)
            select = record["select_rule"]
            small = select == {"kind": "rows_between", "above": 0, "at_most": spread}
            assert small or select == {"kind": "rows_between", "above": spread, "at_most": None}
            rows = name.endswith("_rows")  # a row group per row past the window too
            expected = config["groups"] if small or rows else config["rows_per_cta"]
            assert record["grid_rule"]["rows_per_cta"] == expected, name
            # past the spread window, `_rows` records and 513..4096 (the residual form's: up to
            # 8192) launch a CTA per rows_per_cta rows (capped only by CUDA's grid limit);
            # every other record keeps the persistent 16 CTAs an SM
            top = 8192 if name.endswith("_residual") or not 512 < hidden <= 8192 else 4096
            full = rows or (not small and 512 < record["hidden_rule"]["min"] and hidden <= top)
            if full:
                assert record["grid_rule"]["grid_limit"] == 2**31 - 1, name
                assert record["grid_rule"]["grid_per_sm"] == 0, name
            else:
                assert record["grid_rule"]["grid_limit"] == 0, name
                assert record["grid_rule"]["grid_per_sm"] == 16, name
        elif record["role"] == "bwd_small":
            assert record["grid_rule"]["kind"] == "fixed"
            assert record["workspace_rule"]["kind"] == "borrowed"
            assert record["arches"] == list(SPEC.CLUSTER_ARCHES), name
        elif record["role"] == "bwd_main":
            rule = record["workspace_rule"]
            assert rule["kind"] == "fixed_chunks" and rule["partial_dtype"] == "float64"
            assert rule["min_rows_per_chunk"] == SPEC.backward_config(hidden)["rows_per_cta"]
            # two CTAs share an SM -> 264 chunks at most (two per SM of a 132-SM H100 / H200),
            # one CTA fills it -> 132
            config = SPEC.backward_config(hidden)
            shares_sm = config["vpt"] == 1 and config["block"] <= 512
            assert rule["max_chunks"] == (264 if shares_sm else 132), name
            assert rule["sqrt_rows_factor"] == 4
            # the grid barrier's two words, and a counter for each column slice of the
            # small-batch program's clusters, which borrow this workspace
            assert rule["counters"] == SPEC.SMALL_MAX_CTAS
            assert rule["spread_chunks"] == 8
            assert rule["spread_rows_per_chunk"] == config["rows_per_group"]
            assert record["grid_rule"]["kind"] == "chunk_bounded"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", SPEC.ARCHES)
def test_every_program_compiles_for(arch, tmp_path):
    env = dict(os.environ, MILES_EXT_KERNELS_CACHE=str(tmp_path / "cache"))
    result = subprocess.run(
        [sys.executable, "-m", "miles_ext_kernels.cake", "build", "--arch", arch,
         "--package", SPEC.PACKAGE_NAME, "--jobs", "2"],
        capture_output=True, text=True, env=env, cwd=PACKAGE_DIR.parents[2])
    assert result.returncode == 0, result.stdout + result.stderr
    built = sorted((tmp_path / "cache").rglob("*.so"))
    # fwd, bwd, bwd_nondet, and bwd_small where clusters exist
    assert len(built) == (4 if arch in SPEC.CLUSTER_ARCHES else 3), built
