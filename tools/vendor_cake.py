#!/usr/bin/env python3
"""Vendoring tool entry point: ``python tools/vendor_cake.py --help``.

Copies FlashInfer Cake packages byte for byte from a pinned upstream commit into
``miles_ext_kernels/cake/_vendor/`` and records them in ``VENDORED.json``
(see docs/vendoring.md). The implementation lives in ``tools/cake_vendor/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TOOLS = Path(__file__).resolve().parent
for _path in (_TOOLS, _TOOLS.parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from cake_vendor.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
