"""The Cake vendoring tool: copy upstream Cake packages byte for byte and record them.

The in-process API lives in :mod:`cake_vendor.api`; the click CLI in :mod:`cake_vendor.cli`.
"""

TOOL_VERSION = "0.1.0"

__all__ = ["TOOL_VERSION"]
