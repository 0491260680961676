"""Tables, geomean summary, session spread and plots, all derived from the results JSON.

Everything here reads the JSON-ready dict the runner writes (``results.json``), so a report can
be re-rendered later without a GPU: ``python -m benchmarks.rmsnorm --from-json results.json``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

FAMILY_ORDER = ("plain", "residual", "per_head_strided", "per_head_contig")
OP_TITLES = {
    "fwd": "Forward",
    "bwd": "Backward (deterministic dw)",
    "step": "Training step with activation checkpointing (2 x fwd + bwd)",
}

Row = dict[str, Any]


# ----------------------------------------------------------------------------- derived values


def annotate_row(row: Row, ours_key: str | None, peer_keys: Sequence[str],
                 ceiling_tb_per_s: float | None) -> Row:
    """Fill a row's derived fields: TB/s and % of ceiling per cell, speedups, fastest peer.

    ``speedups[peer] = peer_us / ours_us``; the fastest peer is the quickest peer whose
    outputs met the budget for the op (for bwd/step that includes an FP32 dw).
    """
    cells: dict[str, dict[str, Any]] = row["cells"]
    for cell in cells.values():
        stats = cell.get("stats")
        if stats:
            tb_per_s = row["bytes"] / (stats["median_us"] * 1e-6) / 1e12
            cell["tb_per_s"] = tb_per_s
            cell["pct_ceiling"] = (100.0 * tb_per_s / ceiling_tb_per_s
                                   if ceiling_tb_per_s else None)
    row["ours"] = ours_key
    ours = cells.get(ours_key or "", {})
    ours_us = ours.get("stats", {}).get("median_us") if ours.get("stats") else None
    row["pass"] = ours.get("ok_for_op") if ours_key else None
    speedups: dict[str, float] = {}
    best: tuple[float, str] | None = None
    best_any: tuple[float, str] | None = None
    for key in peer_keys:
        cell = cells.get(key)
        if not cell or not cell.get("stats"):
            continue
        us = cell["stats"]["median_us"]
        if ours_us:
            speedups[key] = us / ours_us
        if best_any is None or us < best_any[0]:
            best_any = (us, key)
        if cell.get("ok_for_op") and (best is None or us < best[0]):
            best = (us, key)
    row["speedups"] = speedups
    row["fastest_peer"] = best[1] if best else None
    row["fastest_any"] = best_any[1] if best_any else None
    return row


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive values (None when there are none)."""
    logs = [math.log(v) for v in values if v and v > 0 and math.isfinite(v)]
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))


def summary(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per op and peer: rows compared, geomean peer/ours, min, max, rows where ours is faster.

    A pseudo-peer ``fastest peer`` compares against each row's fastest in-budget peer.
    """
    out: list[dict[str, Any]] = []
    peers = [c["key"] for c in results["candidates"] if not c["is_ours"]]
    for op in _ops(results):
        rows = [r for r in results["rows"] if r["op"] == op]
        for key in peers + ["fastest peer"]:
            if key == "fastest peer":
                ratios = [r["speedups"][r["fastest_peer"]] for r in rows
                          if r.get("fastest_peer") and r["fastest_peer"] in r["speedups"]]
            else:
                ratios = [r["speedups"][key] for r in rows if key in r.get("speedups", {})]
            if not ratios:
                continue
            out.append({"op": op, "peer": key, "rows": len(ratios), "geomean": geomean(ratios),
                        "min": min(ratios), "max": max(ratios),
                        "ours_faster": sum(1 for v in ratios if v > 1.0)})
    return out


def session_spread(first: Mapping[str, Any], second: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run-to-run spread between two results files, per candidate: |second/first - 1| in %."""
    def index(results: Mapping[str, Any]) -> dict[tuple[str, str], Row]:
        return {(r["case"]["key"], r["op"]): r for r in results["rows"]}

    a, b = index(first), index(second)
    deltas: dict[str, list[float]] = {}
    for key in sorted(set(a) & set(b)):
        for cand, cell in a[key]["cells"].items():
            other = b[key]["cells"].get(cand)
            if cell.get("stats") and other and other.get("stats"):
                ratio = other["stats"]["median_us"] / cell["stats"]["median_us"]
                deltas.setdefault(cand, []).append(100.0 * abs(ratio - 1.0))
    return [{"candidate": cand, "rows": len(vals), "median_pct": statistics.median(vals),
             "max_pct": max(vals)} for cand, vals in deltas.items()]


# ----------------------------------------------------------------------------- markdown


def _ops(results: Mapping[str, Any]) -> list[str]:
    seen: list[str] = []
    for row in results["rows"]:
        if row["op"] not in seen:
            seen.append(row["op"])
    return [op for op in ("fwd", "bwd", "step") if op in seen]


def _us(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _cell_text(cell: Mapping[str, Any] | None) -> str:
    if not cell:
        return "—"
    stats = cell.get("stats")
    if stats:
        mark = "" if cell.get("ok_for_op") else "*"
        eager = "†" if stats.get("mode") == "cuda_eager" else ""
        return f"{_us(stats['median_us'])}{mark}{eager}"
    status = str(cell.get("status", ""))
    if status.startswith("n/a"):
        return "n/a"
    if status.startswith("not run"):
        return "—"
    return "err"


def _row_sort_key(row: Row) -> tuple[Any, ...]:
    case = row["case"]
    family = FAMILY_ORDER.index(case["family"]) if case["family"] in FAMILY_ORDER else 99
    return (family, case["w_dtype"], case["hidden"], case["tokens"])


def _names(results: Mapping[str, Any]) -> dict[str, str]:
    return {c["key"]: c["name"] for c in results["candidates"]}


def op_table(results: Mapping[str, Any], op: str) -> list[str]:
    """The upstream-format table for one op: Shape, T, Pass, ours, peers, speedups, fastest.

    Columns of candidates that produced no timing for this op (e.g. a backend that serves
    none of the shapes) are left out; the Notes list why.
    """
    names = _names(results)
    rows = sorted((r for r in results["rows"] if r["op"] == op), key=_row_sort_key)
    timed = {key for r in rows for key, cell in r["cells"].items() if cell.get("stats")}
    ours_keys = [c["key"] for c in results["candidates"] if c["is_ours"] and c["key"] in timed]
    peers = [c["key"] for c in results["candidates"] if not c["is_ours"] and c["key"] in timed]
    header = (["Shape", "T", "Pass"] + [names[k] for k in ours_keys] + [names[k] for k in peers]
              + [f"{names[k]}/ours" for k in peers] + ["fastest peer", "ours % ceiling"])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        case = row["case"]
        cells = row["cells"]
        passed = {True: "yes", False: "NO", None: "—"}[row.get("pass")]
        values = [case["label"], str(case["tokens"]), passed]
        values += [_cell_text(cells.get(k)) for k in ours_keys + peers]
        values += [f"{row['speedups'][k]:.2f}x" if k in row.get("speedups", {}) else "—"
                   for k in peers]
        fastest = row.get("fastest_peer")
        if fastest and fastest in row.get("speedups", {}):
            values.append(f"{names[fastest]} {_us(cells[fastest]['stats']['median_us'])} "
                          f"({row['speedups'][fastest]:.2f}x)")
        else:
            values.append("none in budget")
        ours_cell = cells.get(row.get("ours") or "", {})
        pct = ours_cell.get("pct_ceiling")
        values.append(f"{pct:.0f}%" if pct is not None else "—")
        lines.append("| " + " | ".join(values) + " |")
    return lines



def _graphs_text(graphs: int) -> str:
    """The Run line's note on CUDA graphs captured per cell (nothing for the default one)."""
    if graphs <= 1:
        return ""
    return f", {graphs} CUDA graphs a candidate and cell (their replays interleaved)"


def _flush_method_text(method: object) -> str:
    """``; flush: <method>`` (empty for results from before the method was recorded)."""
    return f"; flush: {method}" if method else ""


def _kernel_sources_text(sources: object) -> str:
    """``; kernel manifests first_party <sha>, vendored <sha>`` (empty for older results)."""
    if not isinstance(sources, dict) or not sources:
        return ""
    parts = ", ".join(f"{name} `{digest or 'absent'}`" for name, digest in sources.items())
    return f"; kernel manifests (sha256) {parts}"

def _system_lines(results: Mapping[str, Any]) -> list[str]:
    meta = results["meta"]
    system = meta.get("system", {})
    packages = system.get("packages", {})
    smi = system.get("nvidia_smi") or {}
    ceiling = meta.get("copy_ceiling") or {}
    lines = [
        f"* GPU: {system.get('gpu')} (cc {system.get('capability', '—')}, "
        f"{system.get('sms')} SMs, L2 {system.get('l2_mib', '—')} MiB); driver "
        f"{smi.get('driver_version', '—')}; clocks SM {smi.get('clocks.sm', '—')} "
        f"(max {smi.get('clocks.max.sm', '—')}), memory {smi.get('clocks.mem', '—')} "
        f"(max {smi.get('clocks.max.mem', '—')}); power limit {smi.get('power.limit', '—')}",
        f"* Software: torch {system.get('torch')} (CUDA {system.get('torch_cuda')}), triton "
        f"{packages.get('triton')}, liger-kernel {packages.get('liger-kernel')}, quack-kernels "
        f"{packages.get('quack-kernels')}, Python {system.get('python')}; commit "
        f"{system.get('git_commit')}{_kernel_sources_text(system.get('kernel_sources'))}",
        f"* Run: mode `{meta.get('mode')}`, started {meta.get('started')}, "
        f"{meta.get('elapsed_s', 0):.0f} s, complete: {meta.get('complete')}"
        f"{_graphs_text(meta.get('graphs', 1))}",
        f"* Copy ceiling (device-to-device, measured this run): "
        f"{ceiling.get('tb_per_s', float('nan')):.3g} TB/s; L2 flush "
        f"{meta.get('flush_us', float('nan')):.1f} us (measured and subtracted)"
        f"{_flush_method_text(meta.get('flush_method'))}",
    ]
    end = meta.get("nvidia_smi_end")
    if end:
        lines.append(f"* At the end: clocks SM {end.get('clocks.sm', '—')}, temperature "
                     f"{end.get('temperature.gpu', '—')} C, power {end.get('power.draw', '—')}")
    return lines


def render_markdown(results: Mapping[str, Any],
                    spread: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The whole report as markdown (one section per GPU; this run is one GPU)."""
    names = _names(results)
    system = results["meta"].get("system", {})
    out = [f"## RMSNorm on {system.get('gpu')}", ""]
    out += _system_lines(results) + [""]
    out += ["### Candidates", "", "| column | key | version | status |", "|---|---|---|---|"]
    for cand in results["candidates"]:
        out.append(f"| {cand['name']} | `{cand['key']}` | {cand.get('version') or '—'} | "
                   f"{cand['status']} |")
    out.append("")
    legend = ("Median latency in microseconds, cold L2, CUDA-graph replays. `*`: outputs outside "
              "the accuracy budget or dw not FP32 (not eligible as fastest peer). `†`: could not "
              "be captured in a CUDA graph, timed eagerly. `n/a`: shape not supported. `err`: "
              "failed (see Notes). Speedup = peer / ours (> 1: ours is faster). Pass: ours "
              "within the accuracy budget.")
    for op in _ops(results):
        out += [f"### {OP_TITLES[op]}", "", legend, ""] + op_table(results, op) + [""]
    rows = summary(results)
    if rows:
        out += ["### Geomean summary", "",
                "| op | versus | rows | geomean peer/ours | min | max | rows ours faster |",
                "|---|---|---|---|---|---|---|"]
        for item in rows:
            label = names.get(item["peer"], item["peer"])
            out.append(f"| {item['op']} | {label} | {item['rows']} | {item['geomean']:.2f}x | "
                       f"{item['min']:.2f}x | {item['max']:.2f}x | {item['ours_faster']} |")
        out.append("")
    host = results.get("host_overhead")
    if host:
        out += ["### Host overhead per call", "",
                f"Shape {host.get('shape')}, {host.get('calls')} back-to-back calls, "
                "perf_counter, synchronised only at the end (best of 3).", "",
                "| call | host us / call |", "|---|---|"]
        for name, value in host.get("us_per_call", {}).items():
            out.append(f"| {name} | {value:.1f} |")
        for name, error in host.get("errors", {}).items():
            out.append(f"| {name} | error: {error} |")
        out.append("")
    if spread:
        out += ["### Spread between two sessions", "",
                "| candidate | rows | median abs change | max abs change |", "|---|---|---|---|"]
        for item in spread:
            out.append(f"| {names.get(item['candidate'], item['candidate'])} | {item['rows']} | "
                       f"{item['median_pct']:.1f}% | {item['max_pct']:.1f}% |")
        out.append("")
    notes = _notes(results)
    if notes:
        out += ["### Notes", ""] + [f"* {note}" for note in notes] + [""]
    return "\n".join(out)


def _notes(results: Mapping[str, Any]) -> list[str]:
    names = _names(results)
    seen: dict[tuple[str, str], int] = {}
    for row in results["rows"]:
        for key, cell in row["cells"].items():
            status = str(cell.get("status", "ok"))
            note = cell.get("stats", {}).get("note") if cell.get("stats") else None
            for text in ([status] if status != "ok" else []) + ([note] if note else []):
                seen[(key, text)] = seen.get((key, text), 0) + 1
    notes = [f"{names.get(key, key)}: {text} ({count} rows)"
             for (key, text), count in sorted(seen.items())]
    for skipped in results.get("skipped", []):
        notes.append(f"skipped {skipped['case']}: {skipped['reason']}")
    return notes


# ----------------------------------------------------------------------------- plots


def write_plots(results: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """PNG plots for the plain BF16-weight rows: speedup vs T per H, achieved TB/s vs T per H.

    Raises ImportError when matplotlib is absent (the caller records it).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = _names(results)
    ceiling = (results["meta"].get("copy_ceiling") or {}).get("tb_per_s")
    written: list[Path] = []
    for op in _ops(results):
        rows = [r for r in results["rows"] if r["op"] == op and r["case"]["family"] == "plain"
                and r["case"]["w_dtype"] == "bf16"]
        hiddens = sorted({r["case"]["hidden"] for r in rows})
        if not hiddens:
            continue
        for kind in ("speedup", "bandwidth"):
            cols = min(4, len(hiddens))
            nrows = math.ceil(len(hiddens) / cols)
            fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
            for index, hidden in enumerate(hiddens):
                ax = axes[index // cols][index % cols]
                subset = sorted((r for r in rows if r["case"]["hidden"] == hidden),
                                key=lambda r: r["case"]["tokens"])
                _plot_panel(ax, subset, kind, names, ceiling)
                ax.set_title(f"H = {hidden}")
            for index in range(len(hiddens), nrows * cols):
                axes[index // cols][index % cols].axis("off")
            handles, labels = [], []
            for ax in axes.flat:
                for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                    if label not in labels:
                        handles.append(handle)
                        labels.append(label)
            if handles:
                fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)),
                           fontsize="small")
            what = ("speedup of ours (peer / ours)" if kind == "speedup"
                    else "achieved TB/s (bytes / median latency)")
            gpu = results["meta"].get("system", {}).get("gpu")
            fig.suptitle(f"RMSNorm {op}, BF16 x and w, {what}, {gpu}")
            fig.tight_layout(rect=(0, 0.08, 1, 0.95))
            path = out_dir / f"{kind}_{op}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    return written


def _plot_panel(ax: Any, rows: Sequence[Row], kind: str, names: Mapping[str, str],
                ceiling: float | None) -> None:
    keys: list[str] = []
    for row in rows:
        for key in row["cells"]:
            if key not in keys:
                keys.append(key)
    for key in keys:
        if kind == "speedup":
            points = [(r["case"]["tokens"], r["speedups"][key]) for r in rows
                      if key in r.get("speedups", {})]
        else:
            points = [(r["case"]["tokens"], r["cells"][key]["tb_per_s"]) for r in rows
                      if r["cells"].get(key, {}).get("tb_per_s")]
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o", markersize=3, label=names.get(key, key))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("T (rows)")
    if kind == "speedup":
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("peer / ours")
    else:
        ax.set_yscale("log")
        if ceiling:
            ax.axhline(ceiling, color="black", linewidth=0.8, linestyle="--")
        ax.set_ylabel("TB/s (dashed: copy ceiling)")
    ax.grid(True, which="both", alpha=0.3)
