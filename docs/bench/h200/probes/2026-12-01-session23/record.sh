#!/bin/bash
# Session 23, calls 5 and 7: the GPU suite on the tree (suite.sh of session 21), then the
# harness's backward at T 1-256 (every family, BF16 and FP32 weights, ours only) into $OUT/bwd.
bash docs/bench/h200/probes/2026-11-30-session21/suite.sh || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache PYTHONUNBUFFERED=1
python3 -m benchmarks.rmsnorm --device cuda --only bwd --no-plots --no-host-overhead \
  --rows 1,16,64,256 --candidates ours --ours-backends first_party --time-budget 240 \
  --out $OUT/bwd > /tmp/bench.log 2>&1 || tail -20 /tmp/bench.log
python3 - "$OUT/bwd/results.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for t in (1, 16, 64, 256):
    got = [(r["case"]["key"], r["cells"]["ours[first_party]"]["stats"]["median_us"])
           for r in rows if r["case"]["tokens"] == t
           and r["cells"].get("ours[first_party]", {}).get("status") == "ok"]
    print(f"T={t}: {sum(v < 5 for _, v in got)} of {len(got)} under 5 us; over:",
          ", ".join(f"{k.split('/t')[0]} {v:.2f}" for k, v in got if v >= 5))
PY
