# Session 42: sourced by the call scripts (from the repository root, .whl and .device carried).
# Installs tvm-ffi and sets the environment; defines copy_tree (a copy of the repository with a
# package from .device), small (build a tree's small-batch backward module), build_tree (every
# module of the working tree), build_all (both: copies' small modules beside the tree's), sweep (session 28's window_sweep.py over SHAPES in a tree, into
# $OUT/sweep_<label>.txt) and table (the sweeps side by side, table.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 \
  PYTHONUNBUFFERED=1
D=docs/bench/h200/probes/2026-12-03-session42
PKG=miles_ext_kernels/kernels/rmsnorm
SWEEP_PY=$(pwd)/docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
S="64:256,256:256,512:256,640:256,1024:256,1536:256,2048:256,768:512,1024:512,1536:512"
export SHAPES="$S,512:1024,768:1024,1024:1024"
t0=$(date +%s)
copy_tree() {  # name: /tmp/<name>, the repository with .device/<name>'s package
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && rm -rf /tmp/$1/$PKG && cp -r .device/$1/$PKG /tmp/$1/$PKG
}
small() {  # tree label
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 4 \
    --module miles_rmsnorm_bwd_small__h256 > /tmp/build_$2.log 2>&1 \
    || { tail -20 /tmp/build_$2.log; exit 1; })
}
build_tree() {  # jobs
  timeout -s KILL 420 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs $1 \
    > /tmp/build_new.log 2>&1 || { tail -30 /tmp/build_new.log; exit 1; }
}
build_all() {  # jobs, then tree:label pairs (their small modules, built beside the working tree's)
  local jobs=$1 pids=() pair
  shift
  for pair in "$@"; do small ${pair%%:*} ${pair##*:} & pids+=($!); done
  build_tree $jobs
  for pid in "${pids[@]}"; do wait $pid || exit 1; done
  wait
  echo "builds $(( $(date +%s) - t0 )) s"
}
sweep() {  # tree label
  (cd $1 && timeout -s KILL 150 python3 $SWEEP_PY 2>&1 | grep -v -i warn > $OUT/sweep_$2.txt)
  echo "sweep $2 $(( $(date +%s) - t0 )) s"
}
table() { python3 $D/table.py $OUT "$@"; }  # labels
