"""Session 75: ours in two harness records, row by row (the backward's rows at T >= 16384 and
H >= 2048, and any row that moved by more than 1-2%), then the median, least and largest ratio.
  python compare_records.py NEW.json[.gz] OLD.json[.gz]"""
import gzip
import json
import statistics
import sys


def load(path: str) -> dict:
    """The record at ``path`` (gzip or plain JSON)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


new, old = load(sys.argv[1]), load(sys.argv[2])
base = {r["case"]["key"]: r for r in old["rows"]}
print("| row | old | new | new/old | % ceiling (new) |")
print("| --- | --- | --- | --- | --- |")
ratios = []
for row in new["rows"]:
    case = row["case"]
    if case["key"] not in base:
        continue
    ours = row["cells"]["ours[first_party]"]
    x = ours["stats"]["median_us"]
    y = base[case["key"]]["cells"]["ours[first_party]"]["stats"]["median_us"]
    ratios.append(x / y)
    if (case["tokens"] >= 16384 and case["hidden"] >= 2048) or not 0.98 <= x / y <= 1.01:
        print(f"| {case['label']} × {case['tokens']} | {y:.1f} | {x:.1f} | {x / y:.3f} | "
              f"{ours['pct_ceiling']:.0f}% |")
print(len(ratios), "rows: median", round(statistics.median(ratios), 3), "least",
      round(min(ratios), 3), "largest", round(max(ratios), 3))
