"""Session 32: a harness results.json checked against issue 4's performance targets — the
bandwidth rows (T >= 16384, H >= 2048: forward >= 90%, backward >= 85% of the run's copy
ceiling), the small-T lines (T <= 64: backward under 5 us, forward under 3 us) and the rows of
the peer grid (T in 1, 16, 256, 1024, 4096, 16384, 65536) where a peer's median is below ours
(`*`: that peer's outputs are outside the accuracy budget). Usage: grid_summary.py results.json"""
import json
import sys

PEER_GRID_T = {1, 16, 256, 1024, 4096, 16384, 65536}
PEERS = {"torch": "PyTorch", "aten": "aten", "compile": "torch.compile", "liger": "Liger"}
OURS = "ours[first_party]"
data = json.load(open(sys.argv[1]))
ceiling = data["meta"]["copy_ceiling"]["tb_per_s"]
print(f"copy ceiling {ceiling:.2f} TB/s, {len(data['rows'])} rows, "
      f"complete {data['meta'].get('complete')}")
for op, floor, line in (("fwd", 90.0, 3.0), ("bwd", 85.0, 5.0)):
    miss, over, ahead, compared, ran = [], [], {}, 0, {}
    for row in data["rows"]:
        if row["op"] != op:
            continue
        case, cells = row["case"], row["cells"]
        cell = cells.get(OURS, {})
        if cell.get("status") != "ok":
            continue
        ours = cell["stats"]["median_us"]
        t, h, key = case["tokens"], case["hidden"], case["key"]
        if t >= 16384 and h >= 2048 and cell["pct_ceiling"] < floor:
            miss.append(f"{key} {cell['pct_ceiling']:.1f}%")
        if t <= 64 and ours >= line:
            over.append(f"{key} {ours:.2f}")
        if t not in PEER_GRID_T:
            continue
        compared += 1
        for name, peer in cells.items():
            if name not in PEERS or peer.get("status") != "ok":
                continue
            ran[name] = ran.get(name, 0) + 1
            if peer["stats"]["median_us"] < ours:
                ok = peer.get("accuracy", {}).get(f"{op}_ok", True)
                ahead.setdefault(key, []).append(
                    f"{PEERS[name]} {peer['stats']['median_us']:.2f}{'' if ok else '*'}")
        if key in ahead:
            ahead[key].insert(0, f"ours {ours:.2f}:")
    print(f"{op}: bandwidth rows under {floor:.0f}%: {', '.join(miss) or 'none'}")
    print(f"{op}: T <= 64 rows at or over {line} us: {', '.join(over) or 'none'}")
    print(f"{op}: peers ran on {ran}; a peer ahead on {len(ahead)} of {compared} peer-grid rows")
    for key in sorted(ahead):
        print(f"  {key:36s} {' '.join(ahead[key])}")
