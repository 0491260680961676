"""Session 59: are the same SMs slow in every call? From a timeline of one CTA an SM (b1024), per
shape: the correlation of the SMs' rows-done times between each two calls, and each call's ten
slowest SMs (an SM id's TPC partner is id ^ 1).
  python sm_rates.py call1/tl_b1024.txt"""
import itertools
import statistics as st
import sys

runs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("TIMELINE"):
        cur = {"head": line.strip(), "done": {}}
        runs.append(cur)
    elif cur is not None and line[:1].isdigit():
        f = line.split()
        cur["done"][int(f[1])] = float(f[3])
heads = list(dict.fromkeys(r["head"] for r in runs))
for head in heads:
    rs = [r for r in runs if r["head"] == head]
    sms = sorted(rs[0]["done"])
    print(head)
    for a, b in itertools.combinations(range(len(rs)), 2):
        xa = [rs[a]["done"][s] for s in sms]
        xb = [rs[b]["done"][s] for s in sms]
        print(f"  calls {a} and {b}: correlation {st.correlation(xa, xb):.2f}")
    for r in rs:
        slow = sorted(sms, key=lambda s: -r["done"][s])[:10]
        pairs = sum(1 for s in slow if s ^ 1 in slow) // 2
        print(f"  slowest: {slow} ({pairs} TPC pairs)")
