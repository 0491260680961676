"""Session 40: summary of tl.py's timelines (each CTA: start, SM, rows done, fold done; us from
the first CTA's start). Per SM the CTA that started first is 'older'."""
import statistics as st
import sys
from collections import defaultdict

runs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("TIMELINE"):
        cur = {"head": line.strip(), "ctas": []}
        runs.append(cur)
    elif cur is not None and line[:1].isdigit():
        f = line.split()
        b, sm, t0, t1, t2 = f[:5]
        stolen = int(f[5]) if len(f) > 5 else 0
        cur["ctas"].append((int(b), int(sm), float(t0), float(t1), float(t2), stolen))
for run in runs:
    ctas = run["ctas"]
    by_sm = defaultdict(list)
    for c in ctas:
        by_sm[c[1]].append(c)
    older_end, younger_end, older_low, sm_end, sm_first = [], [], 0, [], []
    pairs = 0
    for sm, cs in by_sm.items():
        cs.sort(key=lambda c: (c[2], c[0]))
        sm_end.append(max(c[3] for c in cs))
        sm_first.append(min(c[3] for c in cs))
        if len(cs) == 2:
            pairs += 1
            older_end.append(cs[0][3])
            younger_end.append(cs[1][3])
            older_low += cs[0][0] < cs[1][0]
    ends = sorted(c[3] for c in ctas)
    lo = [c[3] for c in ctas if c[0] < len(ctas) // 2]
    hi = [c[3] for c in ctas if c[0] >= len(ctas) // 2]
    ev = [c[3] for c in ctas if c[0] % 2 == 0]
    od = [c[3] for c in ctas if c[0] % 2 == 1]
    thieves = [c[5] for c in ctas if c[5]]
    print(run["head"], f"SMs {len(by_sm)} pairs {pairs}; stolen blocks {sum(thieves)} by "
          f"{len(thieves)} CTAs")
    print(f"  starts: last {max(c[2] for c in ctas):.2f}; rows done: first {ends[0]:.2f} "
          f"median {st.median(ends):.2f} last {ends[-1]:.2f}; fold done {max(c[4] for c in ctas):.2f}")
    if pairs:
        print(f"  older CTA of an SM done at {st.mean(older_end):.2f} (mean), younger "
              f"{st.mean(younger_end):.2f}; older has the lower blockIdx on {older_low}/{pairs}")
    print(f"  blockIdx < half done {st.mean(lo):.2f}, >= half {st.mean(hi):.2f}; even "
          f"{st.mean(ev):.2f}, odd {st.mean(od):.2f}")
    q = sorted(sm_end)
    print(f"  SM done (last CTA): min {q[0]:.2f} p10 {q[len(q)//10]:.2f} median {st.median(q):.2f} "
          f"p90 {q[9*len(q)//10]:.2f} max {q[-1]:.2f}; SM's first CTA done: median "
          f"{st.median(sm_first):.2f}")
