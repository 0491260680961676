# Session 43: sourced by the call scripts (from the repository root, .whl and .device carried).
# Session 42's common.sh (environment, copy_tree, small, build_tree, build_all, sweep, table) with
# this session's directory, and `knob` (a copy of the working tree with vectors_knob.py's probe
# knob), `stamps_build` / `stamps_run` (this session's stamped probe of a tree) and `harness`
# (ours in the benchmark harness, per-head strided, T 16 and 64, into $OUT/harness_<label>.md).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
D=docs/bench/h200/probes/2026-12-03-session43
table() { python3 docs/bench/h200/probes/2026-12-03-session42/table.py $OUT "$@"; }  # labels
knob() {  # name: /tmp/<name>, the working tree with the column-vectors knob
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && python3 $D/vectors_knob.py /tmp/$1 > /dev/null || exit 1
}
stamps_build() {  # tree name: /tmp/probe_<name>, the stamped probe of the tree's kernel
  local root=$(pwd)
  (cd $1 && python3 $root/$D/make_stamped.py /tmp/st_$2 > /dev/null) || exit 1
  nvcc -arch=sm_90a -std=c++17 -O3 -I/tmp/st_$2 -Idocs/bench/h200/probes -I$1/$PKG/include \
    $D/stamps_probe.cu -o /tmp/probe_$2 2>&1 | grep -i error &
}
stamps_run() { timeout -s KILL 120 /tmp/probe_$1 $2 > $OUT/stamps_$1.txt; }  # name [a: all]
harness() {  # tree label
  (cd $1 && timeout -s KILL 100 python3 -m benchmarks.rmsnorm --device cuda --only bwd \
  --no-plots --no-host-overhead --rows 16,64 --hidden 256 --families per_head_strided \
  --candidates ours --ours-backends first_party --out /tmp/harness_$2 > /tmp/harness_$2.log 2>&1 \
  || tail -5 /tmp/harness_$2.log; cp /tmp/harness_$2/results.md $OUT/harness_$2.md)
  echo "harness $2 $(( $(date +%s) - t0 )) s"; }
