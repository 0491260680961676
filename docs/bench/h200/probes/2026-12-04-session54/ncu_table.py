"""Session 54: ncu's CSV (--csv --metrics ...) of ncu_t1.py runs, one file a label: the median
of each metric over the last five launches of each (kernel, block size).
  python ncu_table.py label=file ..."""
import collections
import csv
import statistics
import sys

print("| label | kernel | block | us | SM cycles | instr |")
print("| --- | --- | --- | --- | --- | --- |")
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    lines = [ln for ln in open(path) if ln.startswith('"')]
    rows = list(csv.DictReader(lines))
    per = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in rows:
        name = r["Kernel Name"]
        kind = "halves" if "halves" in name else "one_row" if "one_row" in name else "inductor"
        per[(kind, r["Block Size"])][int(r["ID"])][r["Metric Name"]] = float(
            r["Metric Value"].replace(",", ""))
    for (kind, block), launches in sorted(per.items()):
        last = [launches[i] for i in sorted(launches)[-5:]]
        med = {m: statistics.median(x[m] for x in last) for m in last[0]}
        us = med.get("gpu__time_duration.sum", 0) / 1000
        print(f"| {label} | {kind} | {block} | {us:.3f} | {med.get('sm__cycles_active.max', 0):.0f}"
              f" | {med.get('smsp__inst_executed.sum', 0):.0f} |")
