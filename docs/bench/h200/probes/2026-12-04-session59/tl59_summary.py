"""Session 59: summary of the timelines that session 40's tl.py prints over apply_probe.py's
stamps (us from the first CTA's entry): per run the last entry, rows done (first / median / p90 /
last over CTAs), partial written (last), barrier out (first / last), fold done (last); per SM the
finish of its last CTA's rows; then each CTA's time from barrier out to fold done (the fold's
tiles and the barrier's finish): min / median / max, and how many CTAs took over 1.5 us (those
with tiles, in the fold before step 96's patch).
  python tl59_summary.py timeline.txt [label]"""
import statistics as st
import sys
from collections import defaultdict

runs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("TIMELINE"):
        cur = {"head": line.split(None, 1)[1].strip(), "ctas": []}
        runs.append(cur)
    elif cur is not None and line[:1].isdigit():
        f = line.split()
        cur["ctas"].append((int(f[0]), int(f[1]), *(float(v) for v in f[2:7])))
label = sys.argv[2] if len(sys.argv) > 2 else ""
for run in runs:
    c = run["ctas"]
    rows = sorted(x[3] for x in c)
    part = [x[4] for x in c]
    bar = [x[5] for x in c if x[5] >= 0]
    fold = [x[6] for x in c if x[6] >= 0]
    by_sm = defaultdict(list)
    for x in c:
        by_sm[x[1]].append(x[3])
    sm_done = sorted(max(v) for v in by_sm.values())
    print(f"{label} {run['head']}: entry last {max(x[2] for x in c):.2f}; rows done "
          f"{rows[0]:.2f} / {st.median(rows):.2f} / p90 {rows[9 * len(rows) // 10]:.2f} / "
          f"{rows[-1]:.2f}; SM done median {st.median(sm_done):.2f}; partial last "
          f"{max(part):.2f}; barrier out {min(bar) if bar else -1:.2f}-"
          f"{max(bar) if bar else -1:.2f}; fold done {max(fold) if fold else -1:.2f}")
    spans = sorted(x[6] - x[5] for x in c if x[5] >= 0 and x[6] >= 0)
    if spans:
        print(f"    barrier out -> fold done: {spans[0]:.2f} / {st.median(spans):.2f} / "
              f"{spans[-1]:.2f} us; {sum(v > 1.5 for v in spans)} of {len(spans)} CTAs over 1.5")
