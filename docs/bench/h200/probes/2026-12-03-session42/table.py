"""Session 42: window_sweep.py's outputs of several trees side by side (cold / warm us a shape).
Usage: python3 table.py OUT LABEL... (reads OUT/sweep_LABEL.txt)."""
import re
import sys

out, runs = sys.argv[1], sys.argv[2:]
rows: dict[str, dict[str, tuple[str, str]]] = {}
for run in runs:
    with open(f"{out}/sweep_{run}.txt") as f:
        for line in f:
            m = re.match(r"\s*(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+\S+$", line)
            if m:
                rows.setdefault(m.group(1), {})[run] = (m.group(2), m.group(3))
print("cold / warm us:", " | ".join(runs))
for shape, v in rows.items():
    print(f"{shape:>20s} " + " | ".join("/".join(v.get(r, ("-", "-"))) for r in runs))
