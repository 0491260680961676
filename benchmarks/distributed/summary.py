"""Render the distributed check's results: the markdown summary and the closing table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _cell(text: object, width: int) -> str:
    value = str(text).replace("\n", " ").replace("|", "/")
    return value if len(value) <= width else value[: width - 3] + "..."


def render_table(checks: Sequence[dict[str, Any]], width: int = 110) -> str:
    """A fixed-width text table: check, required, status, summary."""
    name_w = max([len("check")] + [len(c["name"]) for c in checks])
    lines = [f"{'check':<{name_w}}  req  {'status':<6}  summary",
             f"{'-' * name_w}  ---  ------  {'-' * min(width, 40)}"]
    for check in checks:
        required = "yes" if check["required"] else "no"
        lines.append(f"{check['name']:<{name_w}}  {required:<3}  {check['status']:<6}  "
                     f"{_cell(check['summary'], width)}")
    return "\n".join(lines)


def render_markdown(report: dict[str, Any]) -> str:
    """A short markdown summary of ``report`` (the JSON written next to it)."""
    meta = report["meta"]
    verdict = "PASS" if report["passed"] else "FAIL"
    lines = [
        "# Two-process RMSNorm check",
        "",
        f"Verdict: **{verdict}** ({meta['world_size']} ranks, `{meta['dist_backend']}`, "
        f"device `{meta['device']}`, rmsnorm backend `{meta['rmsnorm_backend']}`, "
        f"{meta['seconds_total']:.1f} s).",
        "",
        f"torch {meta['torch']}, CUDA {meta['cuda']}, NCCL {meta['nccl']}; devices: "
        + ", ".join(f"rank {d['rank']}: {d['name']}" for d in meta["devices"]) + ".",
        "",
        "| check | required | status | summary |",
        "| --- | --- | --- | --- |",
    ]
    for check in report["checks"]:
        lines.append(f"| `{check['name']}` | {'yes' if check['required'] else 'no'} | "
                     f"{check['status']} | {_cell(check['summary'], 160)} |")
    lines += ["", "Section times (s): " + ", ".join(
        f"{name} {sec:.1f}" for name, sec in meta["section_seconds"].items()), ""]
    return "\n".join(lines)
