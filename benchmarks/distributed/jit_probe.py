"""Observe the JIT cache while several ranks call the API at once.

What is observable (``miles_ext_kernels/cake/jit``): ``loader.ensure_built`` returns a
``BuildOutcome`` (``built`` is True only in the process that compiled); a published entry is
``<cache root>/<name>-<key[:32]>/{module.so, meta.json}`` whose ``meta.json`` names the
``builder_pid``; temporary ``.tmp-*`` / ``.trash-*`` directories exist only mid-build. A rank
has loaded a module when its ``.so`` is mapped in ``/proc/self/maps``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from miles_ext_kernels.cake.jit import loader
from miles_ext_kernels.cake.jit.cache import CACHE_ENV, LOCK_DIR, META_NAME, SO_NAME

__all__ = ["CACHE_ENV", "cache_listing", "jit_verdict", "mapped_objects", "record_builds"]


@contextmanager
def record_builds() -> Iterator[list[dict[str, Any]]]:
    """Record every ``loader.ensure_built`` outcome of this process while the block runs.

    The wrapper passes arguments and results through unchanged; it only appends
    ``{module, arch, built, seconds, so_path}`` to the yielded list.
    """
    outcomes: list[dict[str, Any]] = []
    original: Callable[..., Any] = loader.ensure_built

    def recording(*args: Any, **kwargs: Any) -> Any:
        outcome = original(*args, **kwargs)
        outcomes.append({"module": outcome.module, "arch": outcome.arch,
                         "built": bool(outcome.built), "seconds": round(outcome.seconds, 3),
                         "so_path": str(Path(outcome.so_path).resolve())})
        return outcome

    loader.ensure_built = recording
    try:
        yield outcomes
    finally:
        loader.ensure_built = original


def cache_listing(root: Path) -> dict[str, Any]:
    """Published entries (with their ``meta.json`` builder pid) and leftovers under ``root``."""
    entries: list[dict[str, Any]] = []
    leftovers: list[str] = []
    if root.is_dir():
        for child in sorted(root.iterdir()):
            if child.name == LOCK_DIR:
                continue
            if child.name.startswith((".tmp-", ".trash-")) or not child.is_dir():
                leftovers.append(child.name)
                continue
            try:
                meta = json.loads((child / META_NAME).read_text())
            except (OSError, ValueError) as exc:
                entries.append({"dir": child.name, "error": f"{type(exc).__name__}: {exc}"})
                continue
            entries.append({"dir": child.name, "so_path": str((child / SO_NAME).resolve()),
                            "module": meta.get("module"), "arch": meta.get("arch"),
                            "builder_pid": meta.get("builder_pid")})
    return {"root": str(root), "entries": entries, "leftovers": leftovers}


def mapped_objects(root: Path, maps: Path = Path("/proc/self/maps")) -> list[str]:
    """Shared objects under ``root`` mapped into this process (empty where maps is absent)."""
    try:
        text = maps.read_text()
    except OSError:
        return []
    prefix = str(root.resolve())
    found = {line.split(None, 5)[5].strip() for line in text.splitlines()
             if len(line.split(None, 5)) == 6}
    return sorted(p for p in found if p.startswith(prefix) and p.endswith(".so"))


def jit_verdict(
    before: Sequence[dict[str, Any]],
    ranks: Sequence[dict[str, Any]],
    after: dict[str, Any],
) -> tuple[bool, list[str], dict[str, Any]]:
    """Judge the build-once / load-everywhere property from every rank's observations.

    ``before``: each rank's :func:`cache_listing` before the calls; ``ranks``: each rank's
    ``{"pid", "outcomes", "mapped"}``; ``after``: the listing after the calls. Returns
    ``(passed, problems, per-module summary)``.
    """
    problems: list[str] = []
    if any(listing["entries"] or listing["leftovers"] for listing in before):
        problems.append("the cache directory was not empty at the start")
    pids = [int(r["pid"]) for r in ranks]
    modules: dict[str, dict[str, Any]] = {}

    def slot_of(path: str, module: str | None = None, arch: str | None = None) -> dict:
        return modules.setdefault(path, {"module": module, "arch": arch, "built_by": [],
                                         "loaded_by": [], "build_seconds": None})

    for rank, report in enumerate(ranks):
        for outcome in report["outcomes"]:
            slot = slot_of(outcome["so_path"], outcome["module"], outcome["arch"])
            if outcome["built"]:
                slot["built_by"].append(rank)
                slot["build_seconds"] = outcome["seconds"]
    for rank, report in enumerate(ranks):
        for path in report["mapped"]:
            slot_of(path)["loaded_by"].append(rank)
    if not modules:
        problems.append("no module was built or loaded (did a Cake program serve the calls?)")
    published = {e.get("so_path"): e for e in after["entries"]}
    for path, slot in sorted(modules.items()):
        name = slot["module"] or path
        if len(slot["built_by"]) != 1:
            problems.append(f"{name}: built by ranks {slot['built_by']} (want exactly one)")
        missing = sorted(set(range(len(ranks))) - set(slot["loaded_by"]))
        if missing:
            problems.append(f"{name}: not mapped into rank(s) {missing}")
        entry = published.get(path)
        if entry is None:
            problems.append(f"{name}: no published cache entry at {path}")
        elif slot["built_by"] and entry.get("builder_pid") != pids[slot["built_by"][0]]:
            problems.append(f"{name}: meta.json builder_pid {entry.get('builder_pid')} is not "
                            f"the pid of rank {slot['built_by'][0]}")
    if len(after["entries"]) != len(modules):
        problems.append(f"{len(after['entries'])} cache entries for {len(modules)} modules")
    if after["leftovers"]:
        problems.append(f"leftover temporary entries: {after['leftovers']}")
    return not problems, problems, modules
