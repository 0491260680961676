"""Session 45: call 3's rows.txt (lines "LABEL family weight {json}") as one table: per family
and shape the median of each label's passes, and each label's ratio to A's."""
import json
import statistics
import sys
from collections import defaultdict

runs: dict = defaultdict(lambda: defaultdict(list))
labels: list[str] = []
for line in open(sys.argv[1]):
    label, family, weight, data = line.split(" ", 3)
    if label not in labels:
        labels.append(label)
    for shape, us in json.loads(data).items():
        runs[(family, weight, shape)][label].append(us)
print("| family | shape | " + " | ".join(labels) + " | " +
      " | ".join(f"{b}/A" for b in labels[1:]) + " |")
print("|" + " --- |" * (2 + 2 * len(labels) - 1))
for (family, weight, shape), by in runs.items():
    med = {k: statistics.median(v) for k, v in by.items()}
    cells = [", ".join(f"{u:.2f}" for u in by.get(k, [])) for k in labels]
    ratios = [f"{med[k] / med['A']:.3f}" if k in med and "A" in med else "" for k in labels[1:]]
    print(f"| {family} {weight} | {shape} | " + " | ".join(cells) + " | " + " | ".join(ratios)
          + " |")
