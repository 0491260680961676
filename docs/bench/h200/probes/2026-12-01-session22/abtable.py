import json, sys, math
def load(p):
    d = json.load(open(p)); out = {}
    for r in d["rows"]:
        c = r["cells"].get("ours[first_party]", {})
        if c.get("status") == "ok": out[r["case"]["key"]] = c["stats"]["median_us"]
    return out, d["meta"].get("ceiling_tbs") if "meta" in d else None
a, _ = load(sys.argv[1]); b, _ = load(sys.argv[2])
keys = [k for k in a if k in b]
ratios = [b[k] / a[k] for k in keys]
gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
print(f"{len(keys)} rows, geomean B/A {math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f}; B faster on {sum(r < 0.99 for r in ratios)}, slower on {sum(r > 1.01 for r in ratios)}")
for k in keys:
    if abs(b[k] / a[k] - 1) > 0.02: print(f"{k:42s} A {a[k]:6.2f}  B {b[k]:6.2f}  {b[k]/a[k]:.3f}")
sys.exit(0 if gm < 0.995 else 1)
