"""Reading a run's record (``results.json``) back: plain JSON as the runner writes it, or the
gzip-compressed copy (``results.json.gz``) that the repository keeps under ``docs/bench`` (a
record is mostly repeated keys and sample lists; compressed it is a tenth of the size, which
keeps the tracked tree small enough to travel to a device machine)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

GZIP_MAGIC = b"\x1f\x8b"


def read_results(path: Path | str) -> dict[str, Any]:
    """The record at ``path``, plain or gzip-compressed (told apart by the file's first bytes).

    Raises ValueError naming the path when it cannot be read, is not valid JSON (or gzip), or is
    not a record (a JSON object with ``rows``)."""
    path = Path(path)
    return _parse(_read_bytes(path), path)


def _read_bytes(path: Path) -> bytes:
    """The bytes of ``path``; ValueError naming it where it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: not a readable results record ({exc})") from None


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    """The record in ``raw`` (the bytes of ``path``, plain or gzip-compressed)."""
    try:
        if raw.startswith(GZIP_MAGIC):
            raw = gzip.decompress(raw)
        results = json.loads(raw.decode("utf-8"))
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable results record ({exc})") from None
    if not isinstance(results, dict) or not isinstance(results.get("rows"), list):
        raise ValueError(f"{path}: not a results record (a JSON object with a 'rows' list)")
    return results


def write_compressed(results_json: Path | str, *, remove: bool = True) -> Path:
    """Compress a record to ``<name>.gz`` beside it, byte-reproducibly (no name or time in the
    gzip header), after checking that it reads back; removes the plain file when ``remove``.
    Returns the compressed path."""
    src = Path(results_json)
    raw = _read_bytes(src)
    results = _parse(raw, src)
    if raw.startswith(GZIP_MAGIC):
        raise ValueError(f"{src}: already gzip-compressed")
    dst = src.with_name(src.name + ".gz")
    with open(dst, "wb") as out_file, gzip.GzipFile(filename="", mode="wb", fileobj=out_file,
                                                    compresslevel=9, mtime=0) as out:
        out.write(raw)
    if read_results(dst) != results:
        dst.unlink()
        raise ValueError(f"{dst}: the compressed copy does not read back as {src}")
    if remove:
        src.unlink()
    return dst
