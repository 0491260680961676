"""Session 26: every row of two harness runs of `ours` (A, B), with B/A and the geomean."""
import json
import math
import sys


def load(path):
    out = {}
    for row in json.load(open(path))["rows"]:
        cell = row["cells"].get("ours[first_party]", {})
        if cell.get("status") == "ok":
            out[row["case"]["key"]] = cell["stats"]["median_us"]
    return out


a, b = load(sys.argv[1]), load(sys.argv[2])
keys = [k for k in a if k in b]
ratios = [b[k] / a[k] for k in keys]
print(f"{len(keys)} rows, geomean B/A {math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f}")
for k in keys:
    print(f"{k:42s} A {a[k]:6.2f}  B {b[k]:6.2f}  {b[k] / a[k]:.3f}")
