"""Session 52: the last profiled instance of each kernel in an ncu --csv --page details file, a
few metrics a line: python ncu_last.py label file."""
import csv
import sys

KEEP = {
    "Duration": "us", "DRAM Throughput": "dram%", "Registers Per Thread": "regs",
    "Grid Size": "grid", "Block Size": "block", "Achieved Occupancy": "occ%",
    "Warp Cycles Per Issued Instruction": "cyc/issue", "Executed Instructions": "inst",
    "Issue Slots Busy": "issue%", "Memory Throughput": "mem%",
}
last = {}
with open(sys.argv[2]) as f:
    rows = [r for r in csv.reader(f) if len(r) > 10]
head = rows[0]
col = {n: head.index(n) for n in ("ID", "Kernel Name", "Metric Name", "Metric Value",
                                  "Metric Unit")}
for r in rows[1:]:
    name = r[col["Kernel Name"]].split("(")[0].split("<")[0][-40:]
    kid = int(r[col["ID"]])
    cur = last.setdefault(name, {"id": -1})
    if kid > cur["id"]:
        last[name] = cur = {"id": kid}
        for c in ("Grid Size", "Block Size"):
            if c in head:
                cur[KEEP[c]] = r[head.index(c)]
    if kid == cur["id"] and r[col["Metric Name"]] in KEEP:
        cur[KEEP[r[col["Metric Name"]]]] = r[col["Metric Value"]] + r[col["Metric Unit"]][:2]
for name, m in last.items():
    m.pop("id")
    print(sys.argv[1], name, " ".join(f"{k}={v}" for k, v in m.items()))
