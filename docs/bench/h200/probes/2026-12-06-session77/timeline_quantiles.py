"""Session 77: quantiles of the per-CTA timelines that cta_timeline.py recorded (a call's
stamps*.csv.gz: one configuration's first run, times in ns from the first CTA's start). Per
configuration: the span, the CTAs' start and end quantiles, the median duration of the CTAs that
started in the first 1.5 us, and the later CTAs' start and duration.
  python timeline_quantiles.py call4/stamps.csv.gz"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def q(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))]


rows: dict[str, list[tuple[int, int]]] = defaultdict(list)
with gzip.open(sys.argv[1], "rt") as f:
    for r in csv.DictReader(f):
        rows[r["config"]].append((int(r["start_ns"]), int(r["end_ns"])))
print("| config | span | start q50 / q90 | end q10 / q50 / q90 | first CTAs' duration q50 | later "
      "CTAs | their start q10 / q50 | their duration q50 / max |")
print("|" + " --- |" * 8)
for config, stamps in rows.items():
    starts = [s for s, _ in stamps]
    ends = [e for _, e in stamps]
    first = [e - s for s, e in stamps if s <= 1500]
    late = [(s, e - s) for s, e in stamps if s > 1500]
    later = (f"{len(late)} | {q([s for s, _ in late], .1)} / {q([s for s, _ in late], .5)} | "
             f"{statistics.median(d for _, d in late):.0f} / {max(d for _, d in late)}"
             if late else "0 | | ")
    print(f"| {config} | {max(ends)} | {q(starts, .5)} / {q(starts, .9)} | {q(ends, .1)} / "
          f"{q(ends, .5)} / {q(ends, .9)} | {statistics.median(first):.0f} | {later} |")
