"""The benchmark's shape grids: which RMSNorm calls are timed, in which order, and their bytes.

A :class:`Case` is one call shape: a family (plain rows, fused residual add, or a per-head
view), the token count ``T``, the normalised width ``H``, and the weight dtype. Activations are
BF16 throughout. Cases carry a ``tier`` so a run that hits its time budget has already covered
the most telling shapes (tier 0 is the ``--quick`` set).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

FULL_HIDDEN: tuple[int, ...] = (256, 512, 1536, 2048, 4096, 5120, 6144, 8192)
FULL_TOKENS: tuple[int, ...] = (1, 2, 4, 16, 64, 256, 1024, 4096, 16384, 65536)
RESIDUAL_HIDDEN: tuple[int, ...] = (4096, 6144)
QUICK_HIDDEN: tuple[int, ...] = (2048, 4096, 8192)
QUICK_TOKENS: tuple[int, ...] = (1, 16, 1024, 16384, 65536)

FAMILIES: tuple[str, ...] = ("plain", "residual", "per_head_strided", "per_head_contig")
WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp32")
OPS: tuple[str, ...] = ("fwd", "bwd", "step")

# Per-head views: Q norm over a fused QKV projection ([T, 24 + 4 + 4 heads, 256], the 24 query
# heads read in place, so the token stride is 32 heads) and a contiguous K norm [T, 4, 256].
HEAD_DIM = 256
STRIDED_HEADS = 24
STRIDED_ROW_HEADS = 32
CONTIG_HEADS = 4

_ITEMSIZE = {"bf16": 2, "fp16": 2, "fp32": 4}


@dataclass(frozen=True)
class Case:
    """One benchmarked call shape (activations ``x_dtype``, weight ``w_dtype``)."""

    family: str
    tokens: int
    hidden: int
    w_dtype: str = "bf16"
    x_dtype: str = "bf16"
    heads: int = 1
    row_heads: int = 1
    tier: int = 1

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"Case.family must be one of {FAMILIES}, got {self.family!r}")
        if self.w_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"Case.w_dtype must be one of {WEIGHT_DTYPES}, got {self.w_dtype!r}")
        if self.x_dtype not in _ITEMSIZE:
            raise ValueError(f"Case.x_dtype must be one of {tuple(_ITEMSIZE)}, "
                             f"got {self.x_dtype!r}")
        if self.tokens < 1 or self.hidden < 1 or self.heads < 1 or self.row_heads < self.heads:
            raise ValueError(f"Case has a non-positive size or row_heads < heads: {self!r}")

    @property
    def rows(self) -> int:
        """Normalised rows: ``T`` for plain/residual, ``T * heads`` for per-head views."""
        return self.tokens * self.heads

    @property
    def residual(self) -> bool:
        """Whether the call fuses a residual add (``h_new = x + u`` is what gets normalised)."""
        return self.family == "residual"

    @property
    def per_head(self) -> bool:
        """Whether ``x`` is a ``[T, heads, D]`` per-head view."""
        return self.family.startswith("per_head")

    @property
    def shape_label(self) -> str:
        """The table's Shape column: width, family and weight dtype (without T)."""
        weight = f"{self.w_dtype} w"
        if self.family == "plain":
            return f"H={self.hidden}, {weight}"
        if self.family == "residual":
            return f"H={self.hidden} +residual, {weight}"
        layout = "strided" if self.family == "per_head_strided" else "contiguous"
        return f"[T,{self.heads},{self.hidden}] {layout}, {weight}"

    @property
    def key(self) -> str:
        """A stable identifier, unique within a grid."""
        return f"{self.family}/h{self.hidden}/t{self.tokens}/w{self.w_dtype}"

    def tensor_bytes(self, op: str) -> int:
        """Bytes an ideal kernel moves for ``op`` (activation tensors only).

        fwd reads x (and u) and writes y (and h_new); bwd reads x (h_new), g (and g_h) and
        writes dx; step = 2 x fwd + bwd. Weight, rstd and dw traffic (O(H) or O(rows)) is left
        out. For a plain BF16 call that is 4*T*H (fwd) and 6*T*H (bwd) bytes.
        """
        per_tensor = self.rows * self.hidden * _ITEMSIZE[self.x_dtype]
        fwd = (4 if self.residual else 2) * per_tensor
        bwd = (4 if self.residual else 3) * per_tensor
        if op == "fwd":
            return fwd
        if op == "bwd":
            return bwd
        if op == "step":
            return 2 * fwd + bwd
        raise ValueError(f"op must be one of {OPS}, got {op!r}")

    def to_json(self) -> dict[str, object]:
        """The case as a JSON-ready dict (plus its derived key, label and rows)."""
        data: dict[str, object] = asdict(self)
        data.update(key=self.key, label=self.shape_label, rows=self.rows)
        return data


def plain_case(tokens: int, hidden: int, w_dtype: str = "bf16", tier: int = 1) -> Case:
    """A plain ``[T, H]`` call."""
    return Case("plain", tokens, hidden, w_dtype=w_dtype, tier=tier)


def residual_case(tokens: int, hidden: int, w_dtype: str = "bf16", tier: int = 1) -> Case:
    """A fused residual-add call on ``[T, H]``."""
    return Case("residual", tokens, hidden, w_dtype=w_dtype, tier=tier)


def per_head_case(tokens: int, strided: bool, w_dtype: str = "bf16", tier: int = 1) -> Case:
    """A per-head view: ``[T, 24, 256]`` inside a 32-head row (strided) or ``[T, 4, 256]``."""
    if strided:
        return Case("per_head_strided", tokens, HEAD_DIM, w_dtype=w_dtype, heads=STRIDED_HEADS,
                    row_heads=STRIDED_ROW_HEADS, tier=tier)
    return Case("per_head_contig", tokens, HEAD_DIM, w_dtype=w_dtype, heads=CONTIG_HEADS,
                row_heads=CONTIG_HEADS, tier=tier)


def quick_grid() -> list[Case]:
    """The ``--quick`` subset (all tier 0): 26 cases."""
    cases = [plain_case(t, h, tier=0) for h in QUICK_HIDDEN for t in QUICK_TOKENS]
    cases += [plain_case(t, 4096, "fp32", tier=0) for t in (16, 16384, 65536)]
    cases += [residual_case(t, 4096, tier=0) for t in (16, 16384, 65536)]
    cases += [residual_case(16384, 6144, tier=0)]
    cases += [per_head_case(t, strided=True, tier=0) for t in (1024, 16384)]
    cases += [per_head_case(t, strided=False, tier=0) for t in (1024, 16384)]
    return cases


def full_grid() -> list[Case]:
    """Every shape of the issue (200 cases), quick set first, then by tier.

    Tier 1: the rest of the BF16-weight plain grid, residual (H 4096, 6144) and per-head
    views. Tier 2: the rest of the FP32-weight plain grid.
    """
    quick = quick_grid()
    seen = {case.key for case in quick}
    rest: list[Case] = []
    rest += [plain_case(t, h) for h in FULL_HIDDEN for t in FULL_TOKENS]
    rest += [residual_case(t, h) for h in RESIDUAL_HIDDEN for t in FULL_TOKENS]
    rest += [per_head_case(t, strided=True) for t in FULL_TOKENS]
    rest += [per_head_case(t, strided=False) for t in FULL_TOKENS]
    rest += [plain_case(t, h, "fp32", tier=2) for h in FULL_HIDDEN for t in FULL_TOKENS]
    ordered = list(quick)
    for case in sorted(rest, key=lambda c: c.tier):
        if case.key not in seen:
            seen.add(case.key)
            ordered.append(case)
    return ordered


def smoke_grid() -> list[Case]:
    """Tiny shapes for the CPU smoke run: every family and both weight dtypes."""
    return [
        plain_case(1, 256, tier=0),
        plain_case(4, 256, tier=0),
        plain_case(4, 512, tier=0),
        plain_case(4, 256, "fp32", tier=0),
        residual_case(4, 512, tier=0),
        per_head_case(2, strided=True, tier=0),
        per_head_case(2, strided=False, tier=0),
    ]


def parse_int_list(text: str | None, name: str) -> tuple[int, ...] | None:
    """``"1,16,1024"`` -> ``(1, 16, 1024)``; ``None``/empty -> ``None``; bad items raise."""
    if text is None or not text.strip():
        return None
    values: list[int] = []
    for item in text.split(","):
        item = item.strip()
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not an integer (in {text!r})") from None
        if value < 1:
            raise ValueError(f"{name}: values must be >= 1, got {value}")
        values.append(value)
    return tuple(values)


def parse_choice_list(text: str | None, name: str,
                      allowed: Sequence[str]) -> tuple[str, ...] | None:
    """``"fwd,bwd"`` -> ``("fwd", "bwd")`` checked against ``allowed``; ``None`` -> ``None``."""
    if text is None or not text.strip():
        return None
    values = tuple(item.strip() for item in text.split(",") if item.strip())
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise ValueError(f"{name}: unknown value(s) {unknown}; choose from {list(allowed)}")
    return values


def select(
    cases: Iterable[Case],
    *,
    hidden: Sequence[int] | None = None,
    tokens: Sequence[int] | None = None,
    families: Sequence[str] | None = None,
    weights: Sequence[str] | None = None,
) -> list[Case]:
    """The cases whose H, T, family and weight dtype are in the given sets (None = any)."""
    chosen = []
    for case in cases:
        if hidden is not None and case.hidden not in hidden:
            continue
        if tokens is not None and case.tokens not in tokens:
            continue
        if families is not None and case.family not in families:
            continue
        if weights is not None and case.w_dtype not in weights:
            continue
        chosen.append(case)
    return chosen
