"""Detect the SPDX id of an upstream license text."""

from __future__ import annotations

import re

NOASSERTION = "NOASSERTION"

# (spdx id, every phrase that must appear); earliest first match in the text wins.
_SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MIT", ("permission is hereby granted, free of charge",)),
    (
        "BSD-3-Clause",
        ("redistribution and use in source and binary forms", "neither the name"),
    ),
)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).lower()


def detect_spdx(data: bytes) -> str:
    """SPDX id of a license file's text (Apache-2.0, MIT, BSD-3-Clause) or NOASSERTION.

    When a file concatenates several licenses, the one whose text starts first wins.
    """
    text = _squash(data.decode("utf-8", errors="replace"))
    best: tuple[int, str] | None = None
    for spdx, phrases in _SIGNATURES:
        positions = [text.find(p) for p in phrases]
        if all(pos >= 0 for pos in positions):
            start = positions[0]
            if best is None or start < best[0]:
                best = (start, spdx)
    return best[1] if best else NOASSERTION
