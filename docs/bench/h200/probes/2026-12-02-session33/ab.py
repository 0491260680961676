"""Session 32 (used again in 33): rows of an A/B (two runs a side, B A A B), the mean of each side's medians,
B/A and the geomean. Usage: ab.py A1 A2 B1 B2 (harness output directories)."""
import json
import math
import sys


def medians(directory):
    """The first-party cell's median (us) of each row of one harness run, by case key."""
    out = {}
    for row in json.load(open(f"{directory}/results.json"))["rows"]:
        cell = row["cells"].get("ours[first_party]", {})
        if cell.get("status") == "ok":
            out[row["case"]["key"]] = cell["stats"]["median_us"]
    return out


a1, a2, b1, b2 = (medians(d) for d in sys.argv[1:5])
keys = [k for k in a1 if k in a2 and k in b1 and k in b2]
ratios = []
for k in keys:
    a, b = (a1[k] + a2[k]) / 2, (b1[k] + b2[k]) / 2
    ratios.append(b / a)
    print(f"{k:44s} A {a1[k]:6.2f} {a2[k]:6.2f}  B {b1[k]:6.2f} {b2[k]:6.2f}  B/A {b / a:.3f}")
gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
print(f"{len(keys)} rows, geomean B/A {gm:.4f}; B faster (<0.99) on {sum(r < 0.99 for r in ratios)},"
      f" slower (>1.01) on {sum(r > 1.01 for r in ratios)}")
