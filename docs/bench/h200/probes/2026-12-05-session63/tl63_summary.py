"""Session 63: summary of apply_probe63.py's timelines (session 40's tl.py prints them): per run,
the median and last CTA (us from the first CTA's entry) at each stamp, and the spans that make up
the call's end.
  python tl63_summary.py timeline.txt [label]"""
import statistics as st
import sys

NAMES = ["entry", "weights", "first_data", "last_iter", "last_data", "rows_t0", "rows_all",
         "partial", "barrier", "fold"]
runs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("TIMELINE"):
        cur = {"head": line.split(None, 1)[1].strip(), "ctas": []}
        runs.append(cur)
    elif cur is not None and line[:1].isdigit():
        f = line.split()
        cur["ctas"].append([float(v) for v in f[2:]])
label = sys.argv[2] if len(sys.argv) > 2 else ""
for run in runs:
    cols = list(zip(*run["ctas"], strict=True))
    print(f"{label} {run['head']}")
    print("   " + " ".join(f"{n:>10}" for n in NAMES))
    for name, fn in (("min", min), ("median", st.median), ("max", max)):
        vals = [fn([v for v in c if v >= 0] or [-1]) for c in cols]
        print(f"   {name:>6} " + " ".join(f"{v:10.2f}" for v in vals))
    per = [(c[4] - c[3], c[5] - c[4], c[6] - c[4], c[7] - c[6]) for c in run["ctas"]]
    it, tail0, tail, comb = (st.median(x) for x in zip(*per, strict=True))
    print(f"   median CTA: last iteration's wait {it:.2f} us, its rows after landing "
          f"{tail0:.2f} (thread 0) / {tail:.2f} (all), combine + partial {comb:.2f}")
