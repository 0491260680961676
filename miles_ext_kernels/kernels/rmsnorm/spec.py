"""Description of the first-party RMSNorm package, from which ``build.json`` is generated.

``tools/gen_kernel_build_json.py`` turns :func:`build_description` into ``build.json`` and adds
the sha256 digests of the sources and headers. The launch-shape tables here mirror
``include/miles_rmsnorm/config.h``; a test compiles that header on the host and compares.
"""

from __future__ import annotations

from typing import Any

PACKAGE_NAME = "miles_rmsnorm"
FORMAT = "miles-cake-build/1"
MIN_HIDDEN = 64
MAX_HIDDEN = 16384
HIDDEN_MULTIPLE = 8
ARCH_BY_CAPABILITY = {
    "8.0": "sm_80",
    "8.6": "sm_80",
    "8.7": "sm_80",
    "8.9": "sm_89",
    "9.0": "sm_90a",
    "10.0": "sm_100a",
    "10.3": "sm_103a",
    "12.0": "sm_120",
    "12.1": "sm_120",
}
ARCHES = ("sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120")
# Architectures with thread-block clusters, where the small-batch backward program runs.
CLUSTER_ARCHES = ("sm_90a", "sm_100a", "sm_103a", "sm_120")
HEADERS = (
    "include/miles_rmsnorm/backward.cuh",
    "include/miles_rmsnorm/backward_one_row.cuh",
    "include/miles_rmsnorm/backward_policy.h",
    "include/miles_rmsnorm/backward_row_column.cuh",
    "include/miles_rmsnorm/backward_small.cuh",
    "include/miles_rmsnorm/backward_args.h",
    "include/miles_rmsnorm/cluster.cuh",
    "include/miles_rmsnorm/config.h",
    "include/miles_rmsnorm/device.cuh",
    "include/miles_rmsnorm/dispatch.cuh",
    "include/miles_rmsnorm/ffi_args.h",
    "include/miles_rmsnorm/forward.cuh",
    "include/miles_rmsnorm/forward_fixed.cuh",
    "include/miles_rmsnorm/forward_policy.h",
    "include/miles_rmsnorm/forward_split.cuh",
    "include/miles_rmsnorm/launch.h",
    "include/miles_rmsnorm/params.h",
)

# Forward persistent-grid cap and the deterministic backward's chunk partition: at most
# BACKWARD_MAX_CHUNKS chunks where two backward CTAs share an SM (CTAs of at most 512 threads of
# 64 registers), half as many where one CTA fills it, and at most
# BACKWARD_SQRT_ROWS_FACTOR * ceil(sqrt(rows)) (measured on the H200: T=1024, H=8192 52.7 -> 38.0
# us; T=4096, H=8192 96 -> 79 us; no change at T >= 16384 where two CTAs share an SM).
# 264 = 2 x 132: on the 132-SM H100 / H200 every co-resident CTA holds one chunk of a large
# batch, none two (measured on the H200 against 256 / 128: 65536 x 4096 444 -> 434 us, 65536 x
# 8192 899 -> 872, 65536 x 6144 705 -> 688, 65536 x 2048 232 -> 228; T = 16384 within 1%
# except 8192, 234 -> 231; 528 chunks, two a CTA, were slower everywhere). It is a constant of
# the package, not the device's SM count: dw keeps its bits on every GPU.
FORWARD_GRID_PER_SM = 16
# Between these hidden sizes (exclusive, inclusive) the forward past the spread window launches
# a CTA for every rows_per_cta rows instead of the persistent grid (the hardware hands out CTAs
# as SMs free up; measured on the H200: 65536 x 4096 285.7 -> 268.6 us, 65536 x 1536 110.7 ->
# 103.6 us, 16384 x 4096 71.6 -> 69.8 us; no gain at H <= 512, a loss at H >= 5120).
FORWARD_FULL_GRID_HIDDEN = (512, 4096)
# The residual form (x and u read, h_new and y written) takes the full grid up to a higher
# hidden size: its own module records (measured on the H200, persistent -> full grid: 65536 x
# 4608 615.5 -> 582.5 us, x 6144 831.3 -> 783.9, x 8192 1223.8 -> 1101.6; 3-5% at T = 16384;
# docs/kernels.md steps 23-24). Above 8192 not measured.
FORWARD_RESIDUAL_FULL_GRID_HIDDEN = (512, 8192)
# Between these hidden sizes (exclusive, inclusive) the plain forward (no residual) gives every
# row a row group of its own at every T: the loop-free kernel, 32 registers a thread, four CTAs
# an SM (FP32 weights past the small batches load the weights after the row reduction, except
# with one vector a thread in a one-row group: docs/kernels.md step 67).
# Measured on the H200 against the previous records (docs/kernels.md step 26): 16384 x 2048
# 36.8 -> 34.6 us, 16384 x 5120 88.4 -> 81.6, 16384 x 8192 138.9 -> 129.8, 65536 x 6144 414.5
# -> 382.4, 65536 x 8192 549.3 -> 514.1, 1024 x 8192 12.8 -> 11.2; slower at 16384 x 12288
# (203.3 -> 224.3), 4096 x 512 (4.9 -> 5.1) and with a residual (16384 x 4096 134.8 -> 137.1).
# H 520-1024 since session 24 (docs/kernels.md step 55): 1536 x 1024 4.82 -> 3.96 us, 4096 x 1024
# 7.12 -> 6.04, 65536 x 1024 69.8 -> 66.8, 16384 x 768 18.2 -> 15.4, 65536 x 768 60.6 -> 52.1.
# H 136-512 since session 32 (step 65; past the spread window in CTAs of 256 threads, two rows a
# group at H <= 256, config.h): 65536 x 256 21.9 -> 19.2 us, 16384 x 256 7.4 -> 6.2, 4096 x 512
# 4.65 -> 3.98, the per-head view [65536, 24 of 32, 256] 479 -> 395.
FORWARD_ROWS_HIDDEN = (128, 8192)
# The forward stages its rows through a cp.async ring of FORWARD_RING_STAGES stages where the
# plain forward's registers let an SM hold at most FORWARD_RING_MAX_RESIDENT threads and the call
# has no residual (measured on the H200, persistent grid: 65536 x 6144 446.3 -> 419.3 us,
# 16384 x 6144 115.4 -> 104.7 us; slower where an SM holds 1024 plain threads, e.g. 65536 x 4096
# 269 -> 287 us, and with a residual, 65536 x 6144 828 -> 841 us).
FORWARD_RING_STAGES = 3
FORWARD_RING_MAX_RESIDENT = 768
# Grid x of a CUDA launch.
MAX_GRID_X = 2**31 - 1
# Up to FORWARD_SPREAD_CTAS CTAs' worth of rows, at most FORWARD_SPREAD_MAX_ROWS, the forward
# gives every row a row group of its own (grid ceil(T / groups); the kernel sees the grid covers
# the rows and takes the loop-free kernel, one row a group, instead of the row loop's two),
# spreading a batch over more SMs. 128 CTAs until session 24; 384 measured faster on the H200
# (or level) at every row count it adds (docs/kernels.md step 55: 1536 x 256 3.07 -> 2.65 us,
# 3072 x 512 4.59 -> 4.26, 384 x 8192 with a residual 9.73 -> 8.84, the per-head view
# [64, 24 of 32, 256] 3.32 -> 2.81), except where a CTA holds 16 or 32 row groups (H <= 128:
# 6144 x 128 3.58 -> 3.67, 12288 x 64 3.52 -> 3.67), which the row cap keeps out. Above
# FORWARD_SPREAD_MAX_HIDDEN (not measured there) the window stays at the small batches' 128 CTAs.
FORWARD_SPREAD_CTAS = 384
FORWARD_SPREAD_MAX_ROWS = 4096
FORWARD_SPREAD_MAX_HIDDEN = 8192
# From this many rows, past the spread window, a row group at H <= 256 computes two rows
# (config.h's kForwardWideRowsMinRows; a launch choice, same bits), and FP32 weights take the
# half-warp forward (forward_half_warp).
FORWARD_WIDE_ROWS_MIN_ROWS = 16384
# Up to FORWARD_SMALL_BATCH_CTAS CTAs' worth of rows (forward_small_batch_rows; config.h
# mirrors it), a call on a loop-free grid is a small batch: the launcher takes the kernel's
# small-batch instance (64 registers, the weights loaded first) and may split its rows over a
# cluster; past it, the 32-register instance.
FORWARD_SMALL_BATCH_CTAS = 128
BACKWARD_CTAS_PER_SM = 2
BACKWARD_MAX_CHUNKS = 264
BACKWARD_SQRT_ROWS_FACTOR = 4
# A batch of two or more chunks (a fold follows) has at least BACKWARD_SPREAD_CHUNKS of them, at
# least one row group's rows in flight each: on sm_90 such a call runs as one thread-block
# cluster that folds through distributed shared memory (step 36), and spreading its rows over
# more CTAs measured faster on the H200 (64 x 256: 2 -> 8 chunks 5.13 -> 4.61 us; 32 x 512 2 -> 8
# 5.45 -> 4.90; 16 x 1024 2 -> 8 5.72 -> 5.06; 16 x 1536 4 -> 8 5.65 -> 5.27).
BACKWARD_SPREAD_CHUNKS = 8
# On the H200 (the sm_90a routes), calls of at least BACKWARD_LARGE_ROWS rows at the hidden sizes
# whose backward CTA is 512 threads of row groups of 256 or 512 (H 1800-2048 and 3848-4096) take
# BACKWARD_LARGE_CHUNKS chunks in CTAs of 1024 threads, one an SM, instead of 264 in two
# (backward_large_block; config.h mirrors it). Two CTAs an SM finished their rows up to 20-23 us
# apart (16384 x 4096; one CTA: 3-7). Time against two CTAs an SM (docs/kernels.md step 96, on
# step 95's fold): 16384 x 2048 0.992, 16384 x 4096 0.973, 65536 x 2048 0.965, 65536 x 4096
# 0.961, but 4096 x 4096 1.037 and 16384 x 1536 1.047; as landed, over step 96's fold (session
# 62): 16384 x 2048 0.986, 16384 x 4096 0.968, 65536 x 2048 0.958, 65536 x 4096 0.937, the calls
# below BACKWARD_LARGE_ROWS and H 1536 unchanged. The chunk count is a function of (rows,
# hidden) as before, so dw keeps its bits on every grid; the record's partials keep 264 rows.
BACKWARD_LARGE_ROWS = 16384
BACKWARD_LARGE_CHUNKS = 132
BACKWARD_LARGE_BLOCK = 1024  # the one-vector CTA's largest (config.h: backward_max_block(1))
BACKWARD_LARGE_ARCHES = ("sm_90a",)
# The atomic program runs as many CTAs as fit on an SM: one-vector CTAs use at most 64 registers
# a thread (1024 threads an SM), four-vector CTAs up to 128 (one CTA an SM).
ATOMIC_THREADS_PER_SM = 1024
# Where deterministic=False takes the atomic program (atomic_row_windows; H200 measurements in
# docs/kernels.md): T=16 7.3-19.7 us against 8.6-24.8 (deterministic); many rows at H > 8192
# (four vectors a thread): 16384 x 12288 317 us against 355, 16384 x 16384 419 against 441. The
# deterministic program wins in between, and at every T past 16 where a thread holds one vector
# (since its chunks deal rows in turn, step 95: 65536 x 4096 403 us against 449, 16384 x 8192 199
# against 252).
ATOMIC_SMALL_ROWS = 16
ATOMIC_ROWS_SCALE = 1 << 39
ATOMIC_MEASURED_ROWS = 65536


# The small-batch backward (thread-block clusters, small_backward_shape in config.h): clusters
# of up to SMALL_MAX_CTAS CTAs where the driver can place such a cluster (sm_90: H100 / H200;
# else at most SMALL_PORTABLE_CTAS, the portable size, over the same row groups, so the same
# bits) of at most 512 threads and 16 row groups. One cluster while each CTA moves at most
# SMALL_CLUSTER_BYTES of g, x and dx; past that, one cluster per SMALL_CLUSTER_ROWS rows, at most
# SMALL_MAX_CLUSTERS (the last CTA of a column slice folds every cluster's partial at once).
# It serves the first rows of every hidden size up to 8192, to the band's SMALL_WINDOWS limit:
# where it measured faster on the H200 than the main program (docs/kernels.md steps 36-42, 53-54).
SMALL_PORTABLE_CTAS = 8
SMALL_MAX_CTAS = 16
SMALL_MAX_BLOCK = 512
SMALL_MAX_ROW_GROUPS = 16
SMALL_CLUSTER_BYTES = 48 * 1024
SMALL_CLUSTER_ROWS = 8
SMALL_MAX_CLUSTERS = 8
SMALL_BATCH = 4  # rows of a task loaded together where a row group has more than 2 (config.h)
# (largest hidden size of a band, rows): the small-batch program serves rows 1 .. rows of the
# band, up to where the main program overtakes it on the H200 (small-batch / main program, us).
# Since step 63 (session 30: column CTAs first in the grid, in clusters from 512 rows up to
# H = 1024, wide batches; CUPTI kernel time with a cold L2, window_sweep.py, `call7/` of
# docs/bench/h200/bwd_column_clusters_s30): up to H = 128 to 1024 rows as before (not measured
# there; past it the main program's one-cluster fold serves H = 64 up to 2006 rows), 136 to 256
# to 2048 rows (1536 x 256 5.47 / 6.78, 2048 x 256 5.89 / 6.32; the strided per-head view's 1536
# rows 6.05 / 6.88; beyond not measured), 264 to 512 to 1536 rows (1024 x 512 5.02 / 6.69,
# 1536 x 512 6.50 / 7.74), 520 to
# 1024 to 1024 rows (768 x 1024 5.82 / 7.94, 1024 x 1024 6.29 / 7.90), 1032 to 4096 to 768 rows
# (768 x 1536 8.10 / 10.08, 768 x 2048 7.26 / 10.86, 768 x 4096 11.36 / 14.59), 4104 to 6144 to
# 384 rows (384 x 5120 10.69 / 12.06, 384 x 6144 12.11 / 13.47), 6152 to 8192 to 512 rows
# (384 x 8192 13.97 / 16.38, 512 x 8192 16.70 / 18.56). The small-batch program was ahead at
# every edge measured, so past them not measured. Before (session 28, step 61): 1024, 512, 512,
# 192 and 256 rows; with clusters only (steps 42-54): 256, 384, 256, 128 and 256.
SMALL_WINDOWS = ((128, 1024), (256, 2048), (512, 1536), (1024, 1024), (4096, 768), (6144, 384),
                 (8192, 512))
# From ROW_COLUMN_MIN_ROWS rows the small-batch program gives each row a CTA of its own and sums
# dw in column CTAs instead of splitting rows over clusters: faster than those clusters on the
# H200 at every measured hidden size (config.h, row_column_default; docs/kernels.md step 60).
# CTAs of whole rows, at least ROW_COLUMN_MIN_BLOCK threads. (Tall calls run the column CTAs in
# clusters of their own: COLUMN_CLUSTER_* below.)
ROW_COLUMN_MIN_BLOCK = 128
ROW_COLUMN_MIN_ROWS = 8
# The column CTAs run in clusters of a CTA a cluster block (each over its block's rows) from
# COLUMN_CLUSTER_MIN_ROWS rows up to COLUMN_CLUSTER_MAX_HIDDEN, where that measured faster on the
# H200 than column CTAs that each sum every row (config.h, row_column_clusters_default;
# docs/kernels.md step 63).
COLUMN_CLUSTER_MIN_ROWS = 512
COLUMN_CLUSTER_MAX_HIDDEN = 1024
# Rows of a column task loaded at once in column clusters of CTAs of at most ROW_COLUMN_MIN_BLOCK
# threads whose row groups have more than SMALL_BATCH rows and of at most
# ROW_COLUMN_WIDE_MAX_VECTORS vectors a cluster (config.h, kRowColumnWideBatch,
# kRowColumnWideMaxVectors).
ROW_COLUMN_WIDE_BATCH = 8
ROW_COLUMN_WIDE_MAX_VECTORS = 64
# Up to ROW_COLUMN_WIDE_SPLIT_MAX_HIDDEN the wide instance's column tasks take 8 /
# ROW_COLUMN_WIDE_SPLIT elements of a vector (config.h, kRowColumnWideSplit,
# kRowColumnWideSplitMaxHidden).
ROW_COLUMN_WIDE_SPLIT = 2
ROW_COLUMN_WIDE_SPLIT_MAX_HIDDEN = 512


def _pow2_ceil(value: int) -> int:
    p = 1
    while p < value:
        p <<= 1
    return p


def _row_threads(vectors: int) -> int:
    """Threads of a row group: a power of two up to a warp, whole warps above."""
    if vectors <= 32:
        return _pow2_ceil(vectors)
    return -(-vectors // 32) * 32


def _config(vpt: int, tpr: int, min_block: int, rows_per_group: int) -> dict[str, int]:
    block = tpr if tpr >= min_block else tpr * (min_block // tpr)
    groups = block // tpr
    return {"vpt": vpt, "tpr": tpr, "block": block, "groups": groups,
            "rows_per_group": rows_per_group, "rows_per_cta": groups * rows_per_group}


def forward_config(hidden: int) -> dict[str, int]:
    """Launch shape of the forward program for ``hidden`` (mirrors config.h)."""
    nv = hidden // 8
    if nv <= 32:
        return _config(1, _row_threads(nv), 256, 2)
    return _config(2, _row_threads((nv + 1) // 2), 256, 2)


def forward_ring_stages(cfg: dict[str, int], residual: bool) -> int:
    """Stages of the forward's cp.async ring for launch shape ``cfg`` (0: rows go straight to
    registers; mirrors config.h). A launch decision only: the ring computes the same bits."""
    resident = (1024 // cfg["block"]) * cfg["block"]
    return FORWARD_RING_STAGES if not residual and resident <= FORWARD_RING_MAX_RESIDENT else 0


def forward_ring_bytes(cfg: dict[str, int]) -> int:
    """Dynamic shared memory of the forward's ring for launch shape ``cfg`` (mirrors config.h)."""
    return FORWARD_RING_STAGES * cfg["rows_per_group"] * cfg["vpt"] * cfg["block"] * 16


def forward_full_grid(lo: int, hi: int, residual: bool = False) -> bool:
    """Whether the forward records of hidden sizes ``lo..hi`` (of the residual form, or of the
    plain one) launch a CTA per rows_per_cta rows (else a persistent grid of
    FORWARD_GRID_PER_SM CTAs an SM)."""
    low, high = FORWARD_RESIDUAL_FULL_GRID_HIDDEN if residual else FORWARD_FULL_GRID_HIDDEN
    return lo > low and hi <= high


def forward_rows_everywhere(lo: int, hi: int) -> bool:
    """Whether the plain forward of hidden sizes ``lo..hi`` gives every row its own row group at
    every row count (the loop-free kernel), not only in the spread window."""
    low, high = FORWARD_ROWS_HIDDEN
    return lo > low and hi <= high


def forward_spread_rows(cfg: dict[str, int], hidden: int) -> int:
    """Most rows for which the forward of launch shape ``cfg`` (of ``hidden``) gives each row its
    own group (the routes' spread window; above FORWARD_SPREAD_MAX_HIDDEN, the small batches)."""
    if hidden > FORWARD_SPREAD_MAX_HIDDEN:
        return forward_small_batch_rows(cfg)
    return min(cfg["groups"] * FORWARD_SPREAD_CTAS, FORWARD_SPREAD_MAX_ROWS)


def forward_half_warp(rows: int, hidden: int, residual: bool, weight_bytes: int) -> bool:
    """Whether a forward call of ``rows`` x ``hidden`` runs as a half-warp a row
    (``forward_half_warp`` in forward_policy.h): the plain form past the spread window at the
    hidden sizes whose rows take one warp of one vector a thread, with 2-byte weights, or FP32
    ones from FORWARD_WIDE_ROWS_MIN_ROWS rows (a launch choice, same bits)."""
    cfg = forward_config(hidden)
    if residual or cfg["vpt"] != 1 or cfg["tpr"] != 32 or rows <= forward_spread_rows(cfg, hidden):
        return False
    return weight_bytes == 2 or rows >= FORWARD_WIDE_ROWS_MIN_ROWS


def forward_small_batch_rows(cfg: dict[str, int]) -> int:
    """Most rows of a call that the forward launcher treats as a small batch on a loop-free grid
    (mirrors config.h's forward_small_batch_rows)."""
    return cfg["groups"] * FORWARD_SMALL_BATCH_CTAS


# Hidden sizes whose small batches (forward_small_batch_rows, forward_latency_window and
# forward_fixed_rows), with or without a residual, take a forward instance of their own with BF16
# activations (forward_fixed_kernel, same bits; forward_policy.h mirrors the list), contiguous or
# row-strided rows, per-head views only where fixed_forward_per_head says (elsewhere they keep the
# run-time width: docs/kernels.md, steps 80 and 93). Each is a whole number of vectors a thread of
# forward_config, with rows of whole warps (one at H 256 and 512); H 16384 keeps the run-time width
# (step 83: 6% slower at 128 rows with FP32 weights).
FORWARD_FIXED_HIDDEN = (256, 512, 1024, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 7168, 8192,
                        12288)


def fixed_forward_per_head(hidden: int) -> bool:
    """Whether per-head views [T, heads, D] of BF16 rows at D = ``hidden`` take the fixed kernels
    (their per-head instances, by the rules of rows of one head: forward_fixed_rows and
    forward_warp_rows; ``fixed_forward_per_head`` in forward_policy.h): the sizes of
    FORWARD_FIXED_HIDDEN whose rows take one warp (256 and 512; docs/kernels.md step 93)."""
    return hidden in FORWARD_FIXED_HIDDEN and forward_config(hidden)["tpr"] == 32


def fixed_forward_rows_of(hidden: int, heads: int) -> bool:
    """Whether one CTA a row of BF16 activations at ``hidden`` (rows of ``heads`` heads' views)
    runs as forward_fixed_kernel: a size of FORWARD_FIXED_HIDDEN, rows of one head or per-head
    views where fixed_forward_per_head says (``fixed_forward_rows_of`` in forward_policy.h: the
    launcher's fixed-kernel test and split_row_default's ``fixed_kernel``)."""
    return hidden in FORWARD_FIXED_HIDDEN and (heads == 1 or fixed_forward_per_head(hidden))


# The hidden size whose rows take half a warp (forward_config: tpr 16) with a fixed-kernel instance:
# its BF16 plain calls on the loop-free grid of two rows a CTA (the small batches and the spread
# window), per-head views included, take forward_fixed_kernel at TPR 16 (forward_policy.h:
# kFixedHalfWarpHidden, fixed_forward_half_warp; a launch choice, same bits; measured on the H200,
# docs/kernels.md step 94).
FORWARD_FIXED_HALF_WARP_HIDDEN = 128


def fixed_forward_half_warp(hidden: int, residual: bool) -> bool:
    """Whether BF16 calls of ``hidden`` on the loop-free grid of two rows a CTA take the fixed
    kernel at rows of half a warp (``fixed_forward_half_warp`` in forward_policy.h)."""
    return hidden == FORWARD_FIXED_HALF_WARP_HIDDEN and not residual


# BF16 rows of one warp at a size of FORWARD_FIXED_HIDDEN (H 256 and 512) take the fixed kernel
# with forward_config's CTA (its groups rows of one warp a CTA) from more than the first count of
# rows: the plain form up to the spread window, the residual form at every row count up to the
# second (forward_fixed_rows in forward_policy.h; a launch choice, same bits; measured on the
# H200, docs/kernels.md step 85).
FORWARD_FIXED_ROWS_MIN_ROWS = 64
FORWARD_FIXED_ROWS_MAX_ROWS = 1 << 30


def forward_fixed_rows(rows: int, hidden: int, residual: bool) -> bool:
    """Whether a forward call of ``rows`` x ``hidden`` BF16 rows (contiguous, row-strided or, where
    fixed_forward_per_head, per-head views) runs as the fixed kernel with several rows of one warp
    a CTA (``forward_fixed_rows`` in forward_policy.h)."""
    cfg = forward_config(hidden)
    if (hidden not in FORWARD_FIXED_HIDDEN or cfg["tpr"] != 32
            or rows <= FORWARD_FIXED_ROWS_MIN_ROWS or rows > FORWARD_FIXED_ROWS_MAX_ROWS):
        return False
    return residual or rows <= forward_spread_rows(cfg, hidden)


# BF16 rows (contiguous, row-strided or per-head views) at these hidden sizes past the spread
# window take the plain forms' several-rows-a-warp kernel, 4 / vpt rows a warp (forward_warp_rows
# in forward_policy.h; a launch choice, same bits; measured on the H200, docs/kernels.md steps 87
# and 93).
WARP_ROWS_HIDDEN = (256, 512)


def forward_warp_rows(rows: int, hidden: int, residual: bool) -> bool:
    """Whether a forward call of ``rows`` x ``hidden`` BF16 rows (contiguous, row-strided or
    per-head views) runs as forward_fixed_warp_rows_kernel (``forward_warp_rows`` in
    forward_policy.h): the plain forms at WARP_ROWS_HIDDEN past the spread window, up to
    FORWARD_FIXED_ROWS_MAX_ROWS rows."""
    if hidden not in WARP_ROWS_HIDDEN or residual or rows > FORWARD_FIXED_ROWS_MAX_ROWS:
        return False
    return rows > forward_spread_rows(forward_config(hidden), hidden)


# The fixed kernel loads the weights with the row (tied to its first use) always with a residual,
# and for the plain form up to the first count of rows, at every row count for rows of one warp
# (H up to the second), and from the third count of rows (fixed_forward_weights_first in
# forward_policy.h; a launch choice, same bits; measured on the H200, docs/kernels.md steps 48, 80
# and 92).
FORWARD_FIXED_WEIGHTS_FIRST_ROWS = 16
FORWARD_FIXED_WEIGHTS_FIRST_ALL_ROWS_HIDDEN = 512
FORWARD_FIXED_WEIGHTS_FIRST_MIN_ROWS = 768


def fixed_forward_weights_first(rows: int, hidden: int, residual: bool) -> bool:
    """Whether the fixed forward kernel issues the weights' loads with the row's, tied to its
    first use (``fixed_forward_weights_first`` in forward_policy.h)."""
    return (residual or rows <= FORWARD_FIXED_WEIGHTS_FIRST_ROWS
            or hidden <= FORWARD_FIXED_WEIGHTS_FIRST_ALL_ROWS_HIDDEN
            or rows >= FORWARD_FIXED_WEIGHTS_FIRST_MIN_ROWS)


# Streaming calls (past the small batches) load their rows with an L2 evict_last policy where
# their kernel has that instance (a launch choice, same bits; forward_keep_rows and
# forward_keep_ring in forward_policy.h; measured on the H200, docs/kernels.md steps 72-74). The
# loop-free kernel and the row loop (two vectors a thread, 2-byte weights): with a residual from
# the first hidden size or the first element count, without one at the listed hidden sizes or
# from the plain element count; the hidden-size rules from FORWARD_KEEP_ROWS_MIN_HIDDEN_ELEMENTS
# only (step 83). The ring (every weight type): from its element count.
FORWARD_KEEP_ROWS_MIN_RESIDUAL_HIDDEN = 4096
FORWARD_KEEP_ROWS_MIN_HIDDEN_ELEMENTS = 1 << 25
FORWARD_KEEP_ROWS_MIN_RESIDUAL_ELEMENTS = 1 << 26
FORWARD_KEEP_ROWS_PLAIN_HIDDEN = (4096, 8192)
FORWARD_KEEP_ROWS_MIN_PLAIN_ELEMENTS = 1 << 28
FORWARD_KEEP_RING_MIN_ELEMENTS = 16384 * 10240


def forward_keep_rows(rows: int, hidden: int, residual: bool) -> bool:
    """Whether a streaming forward call of ``rows`` x ``hidden`` loads its rows with an L2
    evict_last policy where its kernel (loop-free or row loop) has that instance
    (``forward_keep_rows`` in forward_policy.h)."""
    elements = rows * hidden
    by_hidden = elements >= FORWARD_KEEP_ROWS_MIN_HIDDEN_ELEMENTS
    if residual:
        return ((by_hidden and hidden >= FORWARD_KEEP_ROWS_MIN_RESIDUAL_HIDDEN)
                or elements >= FORWARD_KEEP_ROWS_MIN_RESIDUAL_ELEMENTS)
    return ((by_hidden and hidden in FORWARD_KEEP_ROWS_PLAIN_HIDDEN)
            or elements >= FORWARD_KEEP_ROWS_MIN_PLAIN_ELEMENTS)


def forward_keep_ring(rows: int, hidden: int) -> bool:
    """Whether a call of ``rows`` x ``hidden`` that takes the forward ring copies its rows with an
    L2 evict_last policy (``forward_keep_ring`` in forward_policy.h)."""
    return rows * hidden >= FORWARD_KEEP_RING_MIN_ELEMENTS


# The deterministic backward copies g and x with an L2 evict_last policy from this many elements,
# with one vector a thread, contiguous rows and no residual (backward_keep_rows in
# backward_policy.h; a launch choice, same bits; measured on the H200, docs/kernels.md step 74).
BACKWARD_KEEP_MIN_ELEMENTS = 1 << 28


def backward_keep_rows(rows: int, hidden: int, residual: bool) -> bool:
    """Whether a deterministic backward call of ``rows`` x ``hidden`` contiguous rows copies them
    with an L2 evict_last policy (``backward_keep_rows`` in backward_policy.h)."""
    return (not residual and backward_config(hidden)["vpt"] == 1
            and rows * hidden >= BACKWARD_KEEP_MIN_ELEMENTS)


# The deterministic backward paces its CTAs (the kernel's PACE instance; a launch choice, same
# bits) where its largest chunk runs at least this many iterations (backward_pace in
# backward_policy.h; measured on H100s, docs/kernels.md steps 107 and 109).
BACKWARD_PACE_MIN_ITERATIONS = 24


def backward_pace(vpt: int, block: int, tpr: int, heads: int, residual: bool, chunks: int,
                  grid: int, rows_per_chunk: int) -> bool:
    """Whether a deterministic backward launch of ``grid`` CTAs of ``block`` threads over
    ``chunks`` chunks of at most ``rows_per_chunk`` rows paces its CTAs (``backward_pace`` in
    backward_policy.h): one vector a thread in 1024-thread CTAs, contiguous plain rows, one CTA a
    chunk of two or more, and a largest chunk of at least BACKWARD_PACE_MIN_ITERATIONS
    iterations."""
    if (vpt != 1 or block < BACKWARD_LARGE_BLOCK or tpr < 1 or heads != 1 or residual
            or chunks < 2 or grid != chunks):
        return False
    iteration_rows = block // tpr * backward_rows_per_group(1)
    return -(-rows_per_chunk // iteration_rows) >= BACKWARD_PACE_MIN_ITERATIONS


# The fixed kernel's plain form at this hidden size runs as two CTAs a row (each summing the whole
# row, storing half of y: forward_fixed_halves_kernel, same bits) from this many rows up to half
# the GPU's SMs (fixed_forward_halves in forward_policy.h; measured on the H200, docs/kernels.md
# step 71).
FORWARD_FIXED_HALVES_HIDDEN = 8192
FORWARD_FIXED_HALVES_MIN_ROWS = 33


def fixed_forward_halves(rows: int, hidden: int, residual: bool, sms: int) -> bool:
    """Whether a plain small batch of ``rows`` x ``hidden`` BF16 rows runs as two CTAs a row on
    a GPU of ``sms`` SMs (``fixed_forward_halves`` in forward_policy.h)."""
    return (not residual and hidden == FORWARD_FIXED_HALVES_HIDDEN
            and rows >= FORWARD_FIXED_HALVES_MIN_ROWS and 2 * rows <= sms)


# Past the small batches, calls at H 520..8192 of up to this many elements (below
# FORWARD_LATENCY_WINDOW_SHORT_ROWS_HIDDEN, rows of two warps: the short-row count) still take the
# small-batch path when they have a residual, FP32 weights, or BF16 rows at a size of
# FORWARD_FIXED_HIDDEN (forward_policy.h mirrors it; measured on the H200 7-15% faster for the
# first two at H 2048-8192, docs/kernels.md step 44, 2-5% for the third, step 46; at H 1024-2047
# step 84, at H 520-1016 step 85).
FORWARD_LATENCY_WINDOW_ELEMENTS = 1 << 21
FORWARD_LATENCY_WINDOW_HIDDEN = (520, 8192)
FORWARD_LATENCY_WINDOW_SHORT_ROWS_HIDDEN = 1024
FORWARD_LATENCY_WINDOW_SHORT_ELEMENTS = 1 << 25


def latency_window_elements(hidden: int) -> int:
    """The most elements of a forward call in the latency window at ``hidden``
    (``latency_window_elements`` in forward_policy.h)."""
    if hidden < FORWARD_LATENCY_WINDOW_SHORT_ROWS_HIDDEN:
        return FORWARD_LATENCY_WINDOW_SHORT_ELEMENTS
    return FORWARD_LATENCY_WINDOW_ELEMENTS


# BF16 residual calls with BF16 weights at a fixed size whose row loop is thread-bound
# (residual_row_loop_thread_bound) keep the fixed kernel up to this many rows, past the window's
# elements (forward_policy.h mirrors it; 1024 x 6144 16.40 -> 15.11 us, docs/kernels.md step 49).
FORWARD_LATENCY_WINDOW_THREAD_BOUND_ROWS = 1024


def residual_row_loop_thread_bound(hidden: int) -> bool:
    """Whether the row loop's residual form at ``hidden`` is held to at most
    FORWARD_RING_MAX_RESIDENT threads an SM by its registers (mirrors forward_policy.h)."""
    cfg = forward_config(hidden)
    return (1024 // cfg["block"]) * cfg["block"] <= FORWARD_RING_MAX_RESIDENT


def forward_latency_window(rows: int, hidden: int, residual: bool, weight_bytes: int,
                           bf16_rows: bool) -> bool:
    """Whether a forward call of ``rows`` x ``hidden`` takes the small-batch path past the small
    batches (``forward_latency_window`` in forward_policy.h); ``bf16_rows``: BF16 activations."""
    low, high = FORWARD_LATENCY_WINDOW_HIDDEN
    if not low <= hidden <= high:
        return False
    if (residual and bf16_rows and weight_bytes == 2 and hidden in FORWARD_FIXED_HIDDEN
            and residual_row_loop_thread_bound(hidden)
            and rows <= FORWARD_LATENCY_WINDOW_THREAD_BOUND_ROWS):
        return True
    if rows * hidden > latency_window_elements(hidden):
        return False
    return residual or weight_bytes == 4 or (bf16_rows and hidden in FORWARD_FIXED_HIDDEN)


def forward_latency_window_rows(hidden: int, residual: bool, weight_bytes: int,
                                bf16_rows: bool) -> int:
    """The most rows a forward call at ``hidden`` of this form takes the small-batch path for
    past the small batches (0 where forward_latency_window admits none): the window is a prefix
    of the row counts, the union of the thread-bound rows and the element count's rows."""
    ends = (latency_window_elements(hidden) // hidden, FORWARD_LATENCY_WINDOW_THREAD_BOUND_ROWS)
    return max((rows for rows in ends
                if forward_latency_window(rows, hidden, residual, weight_bytes, bf16_rows)),
               default=0)


# A small batch's row may be split over a thread-block cluster of up to this many CTAs
# (forward_split_kernel; forward_policy.h mirrors the choice below).
FORWARD_SPLIT_MAX_CTAS = 8


# Rows that the fixed kernel computes in one CTA (BF16 rows of one head at a size of
# FORWARD_FIXED_HIDDEN) are not split below this hidden size (forward_policy.h mirrors it; on the
# H200 one CTA of the fixed kernel measured faster than the split at H 4096-8192, the split faster
# at 12288: docs/kernels.md step 90).
FORWARD_SPLIT_FIXED_MIN_HIDDEN = 12288


def split_row_default(rows: int, hidden: int, residual: bool, weight_bytes: int,
                      sms: int, *, fixed_kernel: bool) -> int:
    """CTAs the launcher splits each row of a small batch over on a GPU of ``sms`` SMs with
    thread-block clusters, 0 for one CTA a row (``split_row_default`` in forward_policy.h): the
    largest power of two up to 8 with ``rows * ctas <= sms``, where a whole row moves at least
    48 KB with four CTAs or more, or 96 KB with two; never below FORWARD_SPLIT_FIXED_MIN_HIDDEN
    where ``fixed_kernel`` (one CTA a row would run the fixed kernel: BF16 rows of one head at a
    size of FORWARD_FIXED_HIDDEN)."""
    if fixed_kernel and hidden < FORWARD_SPLIT_FIXED_MIN_HIDDEN:
        return 0
    ctas = FORWARD_SPLIT_MAX_CTAS
    while ctas > 1 and rows * ctas > sms:
        ctas //= 2
    row_bytes = hidden * ((8 if residual else 4) + weight_bytes)
    if ctas >= 4 and row_bytes >= 48 * 1024:
        return ctas
    if ctas >= 2 and row_bytes >= 96 * 1024:
        return ctas
    return 0


def backward_rows_per_group(vpt: int) -> int:
    """Rows a backward row group computes at ``vpt`` vectors a thread (mirrors config.h)."""
    return 2 if vpt == 1 else 1


def backward_config(hidden: int) -> dict[str, int]:
    """Launch shape of the backward programs for ``hidden`` (mirrors config.h)."""
    nv = hidden // 8
    if nv <= 1024:
        return _config(1, _row_threads(nv), 512, backward_rows_per_group(1))
    return _config(4, _row_threads((nv + 3) // 4), 512, backward_rows_per_group(4))


def backward_chunk_block(cfg: dict[str, int], rows_per_chunk: int) -> int:
    """Threads of a deterministic backward CTA for chunks of ``rows_per_chunk`` rows (mirrors
    config.h): the row groups the rows need (four instead of two), whole warps, at most
    ``cfg["block"]``."""
    need = -(-rows_per_chunk // cfg["rows_per_group"])
    if need == 2:
        need = 4
    per_warp = 32 // cfg["tpr"] if cfg["tpr"] < 32 else 1
    groups = -(-need // per_warp) * per_warp
    return cfg["block"] if groups >= cfg["groups"] else groups * cfg["tpr"]


def _small_backward_columns(row_warps: int, tpr: int, max_ctas: int) -> tuple[int, int, int]:
    """(ctas, slice_warps, slice) of a row's warps split over at most ``max_ctas`` CTAs."""
    ctas = min(row_warps, max_ctas)
    slice_warps = -(-row_warps // ctas)
    ctas = -(-row_warps // slice_warps)
    return ctas, slice_warps, (slice_warps * 32 if tpr > 32 else tpr)


def _single_cluster_rows(slice16: int) -> int:
    """The most rows whose CTAs of ``slice16`` threads (8 columns each) move at most
    SMALL_CLUSTER_BYTES of g, x and dx (two bytes each)."""
    return SMALL_CLUSTER_BYTES // (6 * slice16 * 8)


def small_backward_clusters(rows: int, slice16: int) -> int:
    """Clusters of the small-batch backward for ``rows`` rows at the 16-CTA column split
    (CTAs of ``slice16`` threads; mirrors config.h)."""
    if rows <= _single_cluster_rows(slice16):
        return 1
    return min(-(-rows // SMALL_CLUSTER_ROWS), SMALL_MAX_CLUSTERS)


def small_single_cluster_rows(hidden: int) -> int:
    """The most rows the small-batch backward runs as one cluster at ``hidden`` (above them it
    folds dw over several clusters through the route's workspace)."""
    tpr = backward_config(hidden)["tpr"]
    row_warps = tpr // 32 if tpr > 32 else 1
    _, _, slice16 = _small_backward_columns(row_warps, tpr, SMALL_MAX_CTAS)
    return _single_cluster_rows(slice16)


def small_backward_shape(rows: int, hidden: int,
                         max_ctas: int = SMALL_MAX_CTAS) -> dict[str, int]:
    """Launch shape of the small-batch backward for ``rows`` >= 1 rows (mirrors config.h).

    The rows are split into ``clusters`` contiguous blocks of ``rows_per_cluster`` (the last may
    have fewer), a function of (rows, hidden) only. A block's row partition (and so dw) is the
    portable shape's (SMALL_PORTABLE_CTAS) for every ``max_ctas``; more CTAs give each a narrower
    column slice of the same row groups.
    """
    tpr = backward_config(hidden)["tpr"]
    row_warps = tpr // 32 if tpr > 32 else 1
    _, _, slice16 = _small_backward_columns(row_warps, tpr, SMALL_MAX_CTAS)
    clusters = small_backward_clusters(rows, slice16)
    rows_per_cluster = -(-rows // clusters)
    clusters = -(-rows // rows_per_cluster)
    _, _, portable_slice = _small_backward_columns(row_warps, tpr, SMALL_PORTABLE_CTAS)
    groups = min(SMALL_MAX_BLOCK // portable_slice, SMALL_MAX_ROW_GROUPS)
    rows_per_group = -(-rows_per_cluster // groups)
    row_groups = -(-rows_per_cluster // rows_per_group)
    ctas, slice_warps, width = _small_backward_columns(row_warps, tpr, max_ctas)
    return {"clusters": clusters, "rows_per_cluster": rows_per_cluster, "tpr": tpr,
            "row_warps": row_warps, "ctas": ctas, "slice_warps": slice_warps, "slice": width,
            "row_groups": row_groups, "rows_per_group": rows_per_group,
            "block": row_groups * width}


def _row_column_wide_tasks(s: dict[str, int], block: int, cluster: int) -> bool:
    return cluster > 1 and block <= ROW_COLUMN_MIN_BLOCK and s["rows_per_group"] > SMALL_BATCH


def row_column_clusters_default(rows: int, hidden: int) -> bool:
    """Whether a row-and-column call's column CTAs run in clusters by default (mirrors config.h's
    ``row_column_clusters_default``): several cluster blocks, from COLUMN_CLUSTER_MIN_ROWS rows, up
    to COLUMN_CLUSTER_MAX_HIDDEN."""
    clusters = small_backward_shape(rows, hidden)["clusters"]
    return clusters > 1 and rows >= COLUMN_CLUSTER_MIN_ROWS and hidden <= COLUMN_CLUSTER_MAX_HIDDEN


def row_column_shape(rows: int, hidden: int, clustered: bool | None = None) -> dict[str, int]:
    """Row and column CTAs of a small-batch call (mirrors config.h's ``row_column_shape``).

    Row CTAs hold ``rows_per_cta`` whole rows (``row_ctas`` of them, whole clusters); each column
    CTA sums dw over ``vectors`` vectors in ``small_backward_shape``'s order, one task (a row
    group of a cluster block at one vector, or at 8 / ROW_COLUMN_WIDE_SPLIT elements of one in the
    wide instance up to ROW_COLUMN_WIDE_SPLIT_MAX_HIDDEN: ``split`` tasks a vector) a thread:
    over every row where ``cluster`` is 1, else in clusters of ``cluster`` CTAs, CTA k of a
    cluster over cluster block k's rows. Every CTA has ``block`` threads. ``clustered``: the
    column clusters forced on or off (None: the default).
    """
    s = small_backward_shape(rows, hidden)
    if clustered is None:
        clustered = row_column_clusters_default(rows, hidden)
    rows_per_cta = -(-ROW_COLUMN_MIN_BLOCK // s["tpr"])
    block = rows_per_cta * s["tpr"]
    threads = min(block, SMALL_MAX_BLOCK)
    nv = hidden // 8
    cluster = s["clusters"] if clustered and s["clusters"] > 1 else 1
    wide = _row_column_wide_tasks(s, block, cluster)
    split = ROW_COLUMN_WIDE_SPLIT if wide and hidden <= ROW_COLUMN_WIDE_SPLIT_MAX_HIDDEN else 1
    if cluster > 1:
        vectors = min(threads // (s["row_groups"] * split), nv)
    else:
        vectors = threads // (s["clusters"] * s["row_groups"])
    row_ctas = -(-rows // rows_per_cta)
    return {"rows_per_cta": rows_per_cta, "row_ctas": -(-row_ctas // cluster) * cluster,
            "vectors": vectors, "column_ctas": -(-nv // vectors) * cluster, "block": block,
            "cluster": cluster, "split": split}


def row_column_wide_batch(rows: int, hidden: int, clustered: bool | None = None) -> bool:
    """Whether a row-and-column call's column clusters load ROW_COLUMN_WIDE_BATCH rows of a task
    at once (mirrors config.h's ``row_column_wide_batch``): column clusters of CTAs of at most
    ROW_COLUMN_MIN_BLOCK threads whose row groups have more than SMALL_BATCH rows, of at most
    ROW_COLUMN_WIDE_MAX_VECTORS vectors. ``clustered``: the column clusters forced on or off (None:
    the default)."""
    s = small_backward_shape(rows, hidden)
    rc = row_column_shape(rows, hidden, clustered)
    return (_row_column_wide_tasks(s, rc["block"], rc["cluster"])
            and rc["vectors"] <= ROW_COLUMN_WIDE_MAX_VECTORS)


def row_column_default(rows: int) -> bool:
    """Whether a small-batch call of ``rows`` rows runs in row and column CTAs (mirrors config.h;
    the same at every hidden size it serves)."""
    return rows >= ROW_COLUMN_MIN_ROWS


def small_backward_window(hidden: int) -> tuple[int, int]:
    """Rows ``(above, at_most]`` the small-batch backward serves at ``hidden`` ((0, 0): none)."""
    if backward_config(hidden)["vpt"] != 1:
        return (0, 0)
    for largest, at_most in SMALL_WINDOWS:
        if hidden <= largest:
            return (0, at_most)
    return (0, 0)


def backward_large_hidden(cfg: dict[str, int]) -> bool:
    """Whether calls of launch shape ``cfg`` take one 1024-thread CTA an SM from
    BACKWARD_LARGE_ROWS rows on the BACKWARD_LARGE_ARCHES routes (mirrors config.h)."""
    return cfg["vpt"] == 1 and cfg["block"] == 512 and cfg["tpr"] >= 256


def backward_large_block(cfg: dict[str, int], rows: int, n_chunks: int) -> int:
    """Threads of the deterministic backward's CTA for a large call (``rows`` rows in
    ``n_chunks`` chunks), 0 where the call is not one (mirrors config.h): a call of at least
    BACKWARD_LARGE_ROWS rows in BACKWARD_LARGE_CHUNKS chunks at a hidden size of
    ``backward_large_hidden``, which only the BACKWARD_LARGE_ARCHES routes' records make."""
    if (not backward_large_hidden(cfg) or rows < BACKWARD_LARGE_ROWS
            or n_chunks != BACKWARD_LARGE_CHUNKS):
        return 0
    return BACKWARD_LARGE_BLOCK // cfg["tpr"] * cfg["tpr"]


def backward_max_chunks(cfg: dict[str, int]) -> int:
    """Chunk cap of the deterministic backward of launch shape ``cfg`` (a function of H only)."""
    if cfg["vpt"] == 1 and cfg["block"] <= 512:
        return BACKWARD_MAX_CHUNKS
    return BACKWARD_MAX_CHUNKS // 2


def atomic_row_windows(hidden: int, cfg: dict[str, int]) -> list[tuple[int, int | None]]:
    """Row windows ``(above, at_most)`` in which the atomic backward serves ``deterministic=False``.

    Outside them the call takes the deterministic route (the same dx bits, a better dw), which
    measured faster on the H200: the atomic program wins only where the deterministic one needs
    a grid barrier and a fold for a handful of rows (more rows than one CTA iteration, at most
    ATOMIC_SMALL_ROWS), and at many rows where a thread holds four vectors (H > 8192: above
    ATOMIC_ROWS_SCALE / H^2 rows, where measured; never where that bound exceeds
    ATOMIC_MEASURED_ROWS).
    """
    windows: list[tuple[int, int | None]] = []
    if cfg["rows_per_cta"] < ATOMIC_SMALL_ROWS:
        windows.append((cfg["rows_per_cta"], ATOMIC_SMALL_ROWS))
    above = max(ATOMIC_SMALL_ROWS, ATOMIC_ROWS_SCALE // (hidden * hidden))
    if cfg["vpt"] != 1 and above <= ATOMIC_MEASURED_ROWS:
        windows.append((above, None))
    return windows


def atomic_grid_per_sm(cfg: dict[str, int]) -> int:
    """CTAs an SM keeps resident for the atomic backward of launch shape ``cfg``."""
    if cfg["vpt"] != 1:
        return 1
    return max(1, ATOMIC_THREADS_PER_SM // cfg["block"])


def supported_hidden_sizes() -> range:
    """Every hidden size the package serves."""
    return range(MIN_HIDDEN, MAX_HIDDEN + 1, HIDDEN_MULTIPLE)


def hidden_buckets(config_of) -> list[tuple[int, int, dict[str, int]]]:
    """Maximal hidden ranges ``(lo, hi, config)`` over which the launch shape is constant."""
    buckets: list[tuple[int, int, dict[str, int]]] = []
    for hidden in supported_hidden_sizes():
        cfg = config_of(hidden)
        if buckets and buckets[-1][2] == cfg:
            buckets[-1] = (buckets[-1][0], hidden, cfg)
        else:
            buckets.append((hidden, hidden, cfg))
    return buckets


def _launch(cfg: dict[str, int], cooperative: bool) -> dict[str, Any]:
    return {
        "block": [cfg["block"], 1, 1],
        "cluster": [1, 1, 1],
        "cooperative": cooperative,
        "dynamic_smem_bytes": 0,
        "persistent_ctas_per_sm": 0,
        "use_pdl": False,
    }


def _program(kernel: str, launcher: str, arches: tuple[str, ...] = ARCHES) -> dict[str, Any]:
    return {
        "kernel": kernel,
        "kernel_symbol": launcher,
        "sources": [f"csrc/{kernel}_kernel.cu", f"csrc/{kernel}_binding.cu"],
        "arches": list(arches),
        "cache_names": {arch: f"{kernel}_{arch}" for arch in arches},
        "compile_flags": [],
        "ffi_entry": "run",
        "hidden": None,
        "select_rule": None,
    }


_FORWARD_ARGS = [
    ("buffer", "x"), ("buffer", "u"), ("buffer", "w"), ("buffer", "y"), ("buffer", "h_new"),
    ("buffer", "r"), ("parameter", "rows"), ("parameter", "hidden"), ("parameter", "heads"),
    ("parameter", "x_stride"), ("parameter", "x_head_stride"), ("parameter", "u_stride"),
    ("parameter", "u_head_stride"), ("parameter", "eps"), ("parameter", "flags"),
]
_BACKWARD_HEAD = [
    ("buffer", "g"), ("buffer", "x"), ("buffer", "w"), ("buffer", "r"), ("buffer", "dx"),
    ("buffer", "dw"),
]
_BACKWARD_SCALARS = [
    ("parameter", "rows"), ("parameter", "hidden"), ("parameter", "heads"),
    ("parameter", "g_stride"), ("parameter", "g_head_stride"), ("parameter", "x_stride"),
    ("parameter", "x_head_stride"), ("parameter", "gh_stride"), ("parameter", "gh_head_stride"),
]
# Backward programs without a workspace of their own: the atomic program, and the small-batch
# program (whose clusters fold dw through the route's workspace where a call spans several).
_NO_WORKSPACE_ARGS = _BACKWARD_HEAD + [("buffer", "g_h")] + _BACKWARD_SCALARS + [
    ("parameter", "flags")]
_SMALL_ARGS = _BACKWARD_HEAD + [("buffer", "partial"), ("buffer", "counters"),
                                ("buffer", "g_h")] + _BACKWARD_SCALARS + [("parameter", "flags")]
_GRID = [("grid", "grid_x"), ("grid", "grid_y"), ("grid", "grid_z")]
_LOGICAL_RENAMES = {"gh_stride": "g_h_stride", "gh_head_stride": "g_h_head_stride"}


def _logical(arg_plan: list[tuple[str, str]]) -> dict[str, str]:
    return {
        name: _LOGICAL_RENAMES.get(name, name) for kind, name in arg_plan if kind != "grid"
    }


def _record(program: dict[str, Any], role: str, arg_plan, lo: int, hi: int, cfg, *,
            grid_rule, workspace_rule, cooperative: bool) -> dict[str, Any]:
    record = dict(program)
    record.update(
        role=role,
        arg_plan=[list(item) for item in arg_plan],
        logical=_logical(arg_plan),
        launch=_launch(cfg, cooperative),
        grid_rule=grid_rule,
        workspace_rule=workspace_rule,
        hidden_rule={"min": lo, "max": hi},
    )
    return record


def build_description() -> dict[str, Any]:
    """The package description without digests (``tools/gen_kernel_build_json.py`` adds them)."""
    modules: dict[str, dict[str, Any]] = {}
    fwd = _program("miles_rmsnorm_fwd", "miles_rmsnorm_forward_launch")
    bwd = _program("miles_rmsnorm_bwd", "miles_rmsnorm_backward_launch")
    small = _program("miles_rmsnorm_bwd_small", "miles_rmsnorm_backward_small_launch",
                     CLUSTER_ARCHES)
    atomic = _program("miles_rmsnorm_bwd_nondet", "miles_rmsnorm_backward_atomic_launch")
    # Route lists without clusters (sm_80, sm_89) and with them (sm_90 and later), where the
    # small-batch program takes the first rows of every hidden size it serves.
    plain: dict[str, list[str]] = {"fwd": [], "fwd_residual": [], "bwd": [], "bwd_nondet": []}
    cluster: dict[str, list[str]] = {"fwd": [], "fwd_residual": [], "bwd": [], "bwd_nondet": []}
    # The BACKWARD_LARGE_ARCHES routes: the cluster routes with the main program's record
    # replaced, at the hidden sizes of backward_large_hidden, by one whose large calls take
    # BACKWARD_LARGE_CHUNKS chunks (the same program, workspace layout and row windows).
    large: dict[str, str] = {}

    for lo, hi, cfg in hidden_buckets(forward_config):
        spread = forward_spread_rows(cfg, hi)
        full = forward_full_grid(lo, hi)
        full_residual = forward_full_grid(lo, hi, residual=True)
        everywhere = forward_rows_everywhere(lo, hi)
        past = {"kind": "rows_between", "above": spread, "at_most": None}
        # (name, rows_per_cta, select rule, uncapped grid, routes that take it): the spread
        # window, then the plain form past it, then the residual form's own record if its grid
        # differs from the plain form's.
        records = [
            (f"miles_rmsnorm_fwd__h{hi}_t{spread}", cfg["groups"],
             {"kind": "rows_between", "above": 0, "at_most": spread}, False,
             ("fwd", "fwd_residual")),
        ]
        if everywhere:
            records.append((f"miles_rmsnorm_fwd__h{hi}_rows", cfg["groups"], past, True, ("fwd",)))
        shared = full_residual == full
        plain_routes = ("fwd",) if not everywhere else ()
        records.append((f"miles_rmsnorm_fwd__h{hi}", cfg["rows_per_cta"], past, full,
                        plain_routes + (("fwd_residual",) if shared else ())))
        if not shared:
            records.append((f"miles_rmsnorm_fwd__h{hi}_residual", cfg["rows_per_cta"], past,
                            full_residual, ("fwd_residual",)))
        for name, rows_per_cta, select, uncapped, route_names in records:
            if not route_names:
                continue
            modules[name] = _record(
                fwd, "fwd", _FORWARD_ARGS + _GRID, lo, hi, cfg,
                grid_rule={"kind": "rows_per_cta", "rows_per_cta": rows_per_cta,
                           "grid_limit": MAX_GRID_X if uncapped else 0,
                           "grid_per_sm": 0 if uncapped else FORWARD_GRID_PER_SM},
                workspace_rule=None, cooperative=False,
            )
            modules[name]["select_rule"] = select
            for route in route_names:
                plain[route].append(name)
                cluster[route].append(name)
    for lo, hi, cfg in hidden_buckets(backward_config):
        small_above, small_rows = small_backward_window(hi)
        det_args = _BACKWARD_HEAD + [("buffer", "partial"), ("buffer", "counters"),
                                     ("buffer", "g_h")] + _BACKWARD_SCALARS + [
            ("parameter", "n_chunks"), ("parameter", "rows_per_chunk"), ("parameter", "flags")]
        main = _record(
            bwd, "bwd_main", det_args + _GRID, lo, hi, cfg,
            grid_rule={"kind": "chunk_bounded", "ctas_per_sm": BACKWARD_CTAS_PER_SM,
                       "cooperative": True},
            workspace_rule={"kind": "fixed_chunks", "max_chunks": backward_max_chunks(cfg),
                            "min_rows_per_chunk": cfg["rows_per_cta"],
                            "sqrt_rows_factor": BACKWARD_SQRT_ROWS_FACTOR,
                            "spread_chunks": BACKWARD_SPREAD_CHUNKS,
                            "spread_rows_per_chunk": cfg["rows_per_group"],
                            # two for the grid barrier; the small-batch program's clusters
                            # count one a column slice on the same workspace
                            "counters": SMALL_MAX_CTAS, "partial_dtype": "float64"},
            cooperative=True,
        )
        name = f"miles_rmsnorm_bwd__h{hi}"
        modules[name] = main
        plain["bwd"].append(name)
        if small_rows:
            shape = small_backward_shape(small_rows, hi)
            small_name = f"miles_rmsnorm_bwd_small__h{hi}"
            modules[small_name] = _record(
                small, "bwd_small", _SMALL_ARGS + _GRID, lo, hi, cfg,
                grid_rule={"kind": "fixed", "ctas": shape["ctas"]},
                workspace_rule={"kind": "borrowed", "above_rows": small_single_cluster_rows(hi)},
                cooperative=False,
            )
            modules[small_name]["launch"].update(block=[SMALL_MAX_BLOCK, 1, 1],
                                                 cluster=[shape["ctas"], 1, 1])
            modules[small_name]["select_rule"] = {"kind": "rows_between", "above": small_above,
                                                  "at_most": small_rows}
            # The main program takes the rows on either side of the window (one record, so the
            # route keeps one workspace owner).
            if small_above:
                main_name = f"miles_rmsnorm_bwd__h{hi}_outside{small_above}_{small_rows}"
                select = {"kind": "rows_outside", "above": small_above, "at_most": small_rows}
            else:
                main_name = f"miles_rmsnorm_bwd__h{hi}_above{small_rows}"
                select = {"kind": "rows_between", "above": small_rows, "at_most": None}
            modules[main_name] = dict(main, select_rule=select)
            cluster["bwd"] += [small_name, main_name]
            if backward_large_hidden(cfg):
                large_name = f"{main_name}_large{BACKWARD_LARGE_ROWS}"
                modules[large_name] = dict(
                    modules[main_name],
                    workspace_rule=dict(main["workspace_rule"], large_rows=BACKWARD_LARGE_ROWS,
                                        large_max_chunks=BACKWARD_LARGE_CHUNKS),
                    launch=dict(main["launch"], block=[BACKWARD_LARGE_BLOCK, 1, 1]))
                large[main_name] = large_name
        else:
            cluster["bwd"].append(name)
        for above, at_most in atomic_row_windows(hi, cfg):
            suffix = "" if at_most is None else f"_t{at_most}"
            name = f"miles_rmsnorm_bwd_nondet__h{hi}{suffix}"
            modules[name] = _record(
                atomic, "bwd_atomic", _NO_WORKSPACE_ARGS + _GRID, lo, hi, cfg,
                grid_rule={"kind": "rows_per_cta", "rows_per_cta": cfg["rows_per_cta"],
                           "grid_limit": 0, "grid_per_sm": atomic_grid_per_sm(cfg)},
                workspace_rule={"kind": "atomic"}, cooperative=False,
            )
            modules[name]["select_rule"] = {"kind": "rows_between", "above": above,
                                            "at_most": at_most}
            plain["bwd_nondet"].append(name)
            # Where the small-batch program serves the rows, it is the faster backward.
            if above >= small_rows:
                cluster["bwd_nondet"].append(name)

    def forms(routes: dict[str, list[str]]) -> dict[str, list[str]]:
        return {
            "fwd": routes["fwd"],
            "fwd_residual": routes["fwd_residual"],
            "bwd": routes["bwd"],
            "bwd_residual": routes["bwd"],
            "bwd_nondet": routes["bwd_nondet"],
            "bwd_nondet_residual": routes["bwd_nondet"],
        }

    large_routes = {kind: [large.get(name, name) for name in names]
                    for kind, names in cluster.items()}

    def routes_of(arch: str) -> dict[str, list[str]]:
        if arch in BACKWARD_LARGE_ARCHES:
            return large_routes
        return cluster if arch in CLUSTER_ARCHES else plain

    arch_routes = {arch: forms(routes_of(arch)) for arch in ARCHES}
    return {
        "format": FORMAT,
        "op": "rmsnorm",
        "name": PACKAGE_NAME,
        "description": "Deterministic RMSNorm training kernels: y, rstd forward; dx and an FP32 "
        "dw whose bits do not depend on the grid or the SM count.",
        "arch_by_capability": dict(ARCH_BY_CAPABILITY),
        "hidden": {"min": MIN_HIDDEN, "max": MAX_HIDDEN, "multiple_of": HIDDEN_MULTIPLE},
        "dtypes": {"x": ["bfloat16", "float16"], "w": ["bfloat16", "float16", "float32"]},
        "dtype_pairs": [["bfloat16", "bfloat16"], ["bfloat16", "float32"],
                        ["float16", "float16"], ["float16", "float32"]],
        "contracts": ["default", "cast_before_weight_mul", "zero_centered_gamma"],
        "alignment_bytes": 16,
        "row_stride_multiple": HIDDEN_MULTIPLE,
        "include_dirs": ["include"],
        "headers": list(HEADERS),
        "modules": modules,
        "routes": arch_routes,
    }
