"""Errors of the vendoring tool, each carrying the CLI exit status it maps onto."""

from __future__ import annotations

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_ERROR = 2


class VendorError(Exception):
    """A refused or failed vendoring step; the message names the argument or file at fault."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = list(details or [])

    def render(self) -> str:
        """The message followed by one indented line per detail."""
        lines = [str(self)]
        lines.extend(f"  {d}" for d in self.details)
        return "\n".join(lines)
