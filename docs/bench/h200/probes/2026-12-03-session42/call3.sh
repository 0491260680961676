#!/bin/bash
# Session 42, call 3: the working tree (N5: the wide instance stages 8 rows, skips those past a
# task's end, adds its blocks' row groups, then pushes the block sums; the other instances pull
# as before) against HEAD (.device/old: A) and N2 (.device/n2: call 1's build with rows past a
# task's end zeroed and four staged rows), window_sweep.py (session 28) over the column clusters'
# shapes; the GPU suite on N5; stamps of N5 and of its "cheap" copy (make_stamped.py,
# stamps_probe.cu); the harness (ours) at T 16-1024, H 256 and 512, plain and per-head, A and N5.
# Run from the repository root, .whl and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
source $D/stamps.sh
prepare
sweep /tmp/old A; sweep /tmp/n2 N2; sweep . N5; sweep /tmp/old A2; sweep . N5b
timeout -s KILL 280 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
  tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
echo "tests $(( $(date +%s) - t0 )) s"
harness() { (cd $1 && timeout -s KILL 100 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --no-plots --no-host-overhead --rows 16,64,256,1024 --hidden 256,512 \
  --families plain,per_head_strided,per_head_contig --candidates ours --ours-backends first_party \
  --time-budget 90 --out $OUT/harness_$2 > /tmp/harness_$2.log 2>&1 || tail -5 /tmp/harness_$2.log)
  echo "harness $2 $(( $(date +%s) - t0 )) s"; }
harness /tmp/old A; harness . N5
stamps_show
table A N2 N5 A2 N5b
