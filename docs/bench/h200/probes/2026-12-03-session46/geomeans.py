"""Session 46: geomeans of an ab_table.py table's ratio column (the first ratio: the second
label against the first), over all rows, by T and by family."""
import math
import sys
from collections import defaultdict

groups: dict[str, list[float]] = defaultdict(list)
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.split("|")]
    if len(cells) < 6 or cells[1] in ("family", "---"):
        continue
    ratio = float(cells[5])
    for key in ("all", "T=" + cells[2].split("x")[0], cells[1]):
        groups[key].append(ratio)
for key, values in groups.items():
    mean = math.exp(sum(map(math.log, values)) / len(values))
    print(f"{key}: geomean {mean:.3f} over {len(values)}")
