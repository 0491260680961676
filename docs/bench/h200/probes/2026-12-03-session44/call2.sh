#!/bin/bash
# Session 44, call 2: the landed sources (the working tree, call 1's M with comments edited) in a
# record run of the backward at T 1, 16 and 64 (every family and weight of the grid; ours and
# aten), the forward at T = 64 (ours and aten: where the residual row at 6144 stands), the harness
# at the per-head view (ours; HEAD f9ee938 as .device/old: A, again) and window_sweep.py (session
# 28) over the column clusters' shapes, M and A. Run from the repository root, .whl and .device
# carried.
source docs/bench/h200/probes/2026-12-03-session43/common.sh
copy_tree old || exit 1
build_all 12 /tmp/old:A
record() {  # label, then the harness's arguments
  local label=$1
  shift
  timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --candidates ours,aten \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/$label "$@" \
    > /tmp/$label.log 2>&1 || tail -5 /tmp/$label.log
  cp /tmp/$label/results.md $OUT/$label.md
  echo "$label $(( $(date +%s) - t0 )) s"
}
record record_bwd_t1_16_64 --only bwd --rows 1,16,64
cp /tmp/record_bwd_t1_16_64/results.json $OUT/record_bwd_t1_16_64.json
record record_fwd_t64 --only fwd --rows 64
harness . M; harness /tmp/old A
grep -H "strided" $OUT/harness_*.md
sweep . M; sweep /tmp/old A
table A M | tee $OUT/table.txt
mkdir -p /tmp/sweeps && mv $OUT/sweep_* /tmp/sweeps/
