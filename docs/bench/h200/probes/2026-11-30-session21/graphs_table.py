import json, sys
def load(p):
    d = json.load(open(p)); out = {}
    for r in d["rows"]:
        for k, c in r["cells"].items():
            s = c.get("stats")
            if s: out[(r["case"]["key"], k)] = s
    return d["meta"], out
m1, a = load(sys.argv[1]); m3, b = load(sys.argv[2])
print("graphs", m1.get("graphs"), m3.get("graphs"), "ceiling", m1.get("ceiling_tbps", ""))
keys = sorted({k[0] for k in a})
print(f"{'case':44s} {'ours g1':>8s} {'liger g1':>8s} {'ours g3':>8s} {'p10-p90':>11s} {'spr%':>5s} {'liger g3':>8s} {'p10-p90':>11s} {'spr%':>5s}")
for key in keys:
    cells = [k for (kk, k) in a if kk == key]
    o = next((c for c in cells if c.startswith("ours")), None); l = next((c for c in cells if c.startswith("liger")), None)
    def f(d, c, w=False):
        s = d.get((key, c))
        if not s: return "-"
        return f"{s['median_us']:.2f}" if not w else f"{s['p10_us']:.2f}-{s['p90_us']:.2f}"
    def sp(d, c):
        s = d.get((key, c)); return f"{s.get('graph_spread_pct', 0):.1f}" if s else "-"
    print(f"{key:44s} {f(a,o):>8s} {f(a,l):>8s} {f(b,o):>8s} {f(b,o,1):>11s} {sp(b,o):>5s} {f(b,l):>8s} {f(b,l,1):>11s} {sp(b,l):>5s}")
