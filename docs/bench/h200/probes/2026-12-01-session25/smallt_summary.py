"""Summarise a harness results.json at small T: ours against the line (bwd 5 us, fwd 3 us at
T <= 64) and every row where a peer's median is below ours (session 25's record run)."""
import json
import sys

path, op = sys.argv[1], sys.argv[2]
line = 5.0 if op == "bwd" else 3.0
rows = json.load(open(path))["rows"]
ours_key = "ours[first_party]"
for t in sorted({r["case"]["tokens"] for r in rows}):
    got = []
    for r in rows:
        cell = r["cells"].get(ours_key, {})
        if r["case"]["tokens"] == t and cell.get("status") == "ok":
            got.append((r["case"]["key"].replace(f"/t{t}", ""), cell["stats"]["median_us"]))
    over = ", ".join(f"{k} {v:.2f}" for k, v in got if v >= line)
    print(f"{op} T={t}: {sum(v < line for _, v in got)} of {len(got)} under {line} us;"
          f" over: {over or '-'}")
ahead = []
for r in rows:
    ours = r["cells"].get(ours_key, {})
    if ours.get("status") != "ok":
        continue
    for name, cell in r["cells"].items():
        if name == ours_key or cell.get("status") != "ok":
            continue
        if cell["stats"]["median_us"] < ours["stats"]["median_us"]:
            ok = cell.get("accuracy", {}).get("bwd_ok" if op == "bwd" else "fwd_ok")
            ahead.append((r["case"]["key"], name, cell["stats"]["median_us"],
                          ours["stats"]["median_us"], ok))
print(f"{op}: a peer ahead on {len({a[0] for a in ahead})} of {len(rows)} rows")
for key, name, theirs, ours, ok in sorted(ahead):
    print(f"  {key:34s} {name:8s} {theirs:6.2f} vs ours {ours:6.2f}"
          f" ({'in budget' if ok else 'outside the accuracy budget'})")
