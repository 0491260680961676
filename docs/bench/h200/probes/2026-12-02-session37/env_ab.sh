#!/bin/bash
# Session 37: rows.py (session 34) on one build of the working tree, with $ENVVAR unset (B) and
# set to $ENVVAL (V), in B V V B order; prints V / B a shape (mean of two medians each side).
#   ENVVAR, ENVVAL; RUNS: ";"-separated rows.py argument lists. Expects PYTHONPATH and the
#   cache set up and the modules built.
S34=docs/bench/h200/probes/2026-12-02-session34
IFS=';' read -ra runs <<< "$RUNS"
for args in "${runs[@]}"; do
  for v in B V V B; do
    if [ $v = B ]; then out=$(env -u $ENVVAR python3 $S34/rows.py $args 2>&1 | tail -1)
    else out=$(env $ENVVAR=$ENVVAL python3 $S34/rows.py $args 2>&1 | tail -1); fi
    echo "$v $out" | tee -a /tmp/envrows.txt
  done
  python3 - <<'PY'
import json
lines = [l.split(" ", 1) for l in open("/tmp/envrows.txt").read().splitlines()[-4:]]
b = [json.loads(lines[0][1]), json.loads(lines[3][1])]
v = [json.loads(lines[1][1]), json.loads(lines[2][1])]
for k in b[0]:
    mb, mv = (b[0][k] + b[1][k]) / 2, (v[0][k] + v[1][k]) / 2
    print(f"  {k:>12}  B {mb:8.3f}  V {mv:8.3f}  B/V {mb / mv:.3f}")
PY
done
