#!/bin/bash
# Session 42, call 2: the working tree (N3: N2 with outputs spread over the cluster by element)
# against HEAD (.device/old: A) and N2 (.device/n2: call 1's build with rows past a task's end
# zeroed and four staged rows), window_sweep.py (session 28) over the column clusters' shapes;
# the GPU suite on N3; stamps of N3 and of its "cheap" copy (make_stamped.py, stamps_probe.cu:
# this call ran the copy whose stamp 3 came before the row groups, 5 after them). Run from the
# repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
source $D/stamps.sh
prepare
sweep /tmp/old A; sweep /tmp/n2 N2; sweep . N3; sweep /tmp/old A2
timeout -s KILL 280 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
stamps_show
table A N2 N3 A2
