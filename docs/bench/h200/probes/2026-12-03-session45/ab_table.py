"""Session 45: a call's rows.txt (lines "LABEL family weight {json}") as one table: per family
and shape the median of each label's passes, and each label's ratio to the first label's."""
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
base = labels[0]
print("| family | shape | " + " | ".join(labels) + " | " +
      " | ".join(f"{b}/{base}" for b in labels[1:]) + " |")
print("|" + " --- |" * (2 + 2 * len(labels) - 1))
for (family, weight, shape), by in runs.items():
    med = {k: statistics.median(v) for k, v in by.items()}
    cells = [", ".join(f"{u:.2f}" for u in by.get(k, [])) for k in labels]
    ratios = [f"{med[k] / med[base]:.3f}" if k in med and base in med else "" for k in labels[1:]]
    print(f"| {family} {weight} | {shape} | " + " | ".join(cells) + " | " + " | ".join(ratios)
          + " |")
