# Session 42: sourced by the call scripts (from the repository root, .whl and .device carried).
# Installs tvm-ffi and sets the environment; defines copy_tree (a copy of the repository with a
# package from .device), small (build a tree's small-batch backward module), build_tree (every
# module of the working tree), build_all (both: copies' small modules beside the tree's), sweep (session 28's window_sweep.py over SHAPES in a tree, into
# $OUT/sweep_<label>.txt) and table (the sweeps side by side, table.py). Session 46 added
# fwd_build (a tree's forward modules), ab (session 41's rows.py over trees, labelled),
# fwd_record (the harness's record of the forward at T 1, 16, 64), slow_rows and gpu_suite;
# session 55 overlay_tree (a copy with only .device/<name>'s changed files laid over it);
# session 56 split_run (rows.py's forward in the working tree with a split forced or not);
# session 57 overlay_builds (an overlay's forward modules beside the tree's) and abba (ab both ways);
# session 59 build_matching (a tree's modules whose names match a regular expression), rows_run
# (rows.py's backward in a tree with variables set) and envs (rows_run once per label); session 69
# bwd_ab (rows.py's backward A/B at step 101's shapes) and bwd_record (the harness's backward at
# T 4096-65536 against an earlier record); session 70 fwd_small_record (the harness's forward at
# T 1-64, H 256-4096), fwd_twice_run and twice_table (session 68's fwd_twice.py in a tree, its
# rows side by side), fwd_step_builds and fwd_step_twice (the working tree against .device/H);
# session 74 patched_tree (a copy with patches applied), land_check (a patched tree's modules and
# GPU suite, main's modules matching a regex beside it, and its dx and dw bits against main's).
# Session 78: rows_run's ROWS_OP=fwd (the forward) and h200_lines (the harness's bandwidth lines,
# on an H200 only).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 \
  PYTHONUNBUFFERED=1
D=docs/bench/h200/probes/2026-12-03-session42
PKG=miles_ext_kernels/kernels/rmsnorm
SWEEP_PY=$(pwd)/docs/bench/h200/probes/2026-12-01-session28/window_sweep.py
TWICE_PY=$(pwd)/docs/bench/h200/probes/2026-12-05-session68/fwd_twice.py
ROWS_PY=$(pwd)/docs/bench/h200/probes/2026-12-03-session41/rows.py
S="64:256,256:256,512:256,640:256,1024:256,1536:256,2048:256,768:512,1024:512,1536:512"
export SHAPES="$S,512:1024,768:1024,1024:1024"
t0=$(date +%s)
copy_tree() {  # name: /tmp/<name>, the repository with .device/<name>'s package
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && rm -rf /tmp/$1/$PKG && cp -r .device/$1/$PKG /tmp/$1/$PKG
}
overlay_tree() {  # name: /tmp/<name>, the repository with .device/<name>'s files laid over it
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && cp -r .device/$1/. /tmp/$1/ \
    && (cd /tmp/$1 && python3 tools/gen_kernel_build_json.py > /dev/null)
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
build_matching() {  # tree label jobs regex: the tree's modules whose names match (re.match)
  local mods
  mods=$(cd $1 && python3 -c "
import json, re
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules'] if re.match(r'$4', m)))")
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
    --jobs $3 $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
fwd_build() {  # tree label [jobs]: the tree's forward modules (miles_rmsnorm_fwd__h*)
  build_matching $1 $2 ${3:-8} 'miles_rmsnorm_fwd__h'
}
ab() {  # file op shapes "family weight"... -- "tree label"...: rows.py lines "label family weight {json}"
  local file=$1 op=$2 shapes=$3 fams=() fam pair
  shift 3
  while [ "$1" != "--" ]; do fams+=("$1"); shift; done
  shift
  for pair in "$@"; do
    for fam in "${fams[@]}"; do
      set -- $pair $fam
      (cd $1 && timeout -s KILL 120 python3 $ROWS_PY $op $3 $4 $shapes 2>/dev/null \
        | sed "s/^/$2 $3 $4 /") >> $OUT/$file
    done
  done
}
fwd_record() {  # name candidates: the harness's record of the forward at T 1, 16, 64 -> $OUT/name.md
  timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
    --candidates $2 --ours-backends first_party --no-plots --no-host-overhead \
    --out /tmp/$1 > /tmp/$1.log 2>&1 || tail -5 /tmp/$1.log
  cp /tmp/$1/results.md $OUT/$1.md; cp /tmp/$1/results.json $OUT/$1.json
}
bwd_ab() {  # file "tree label" "tree label": rows.py's backward at step 101's shapes (sessions
  # 67-68): A B B A plain BF16 at five large shapes, A B with FP32 weights and the residual form
  # at two, then the table (session 45's ab_table.py)
  abba $1 bwd 16384x2048,16384x4096,65536x2048,65536x4096,16384x8192 "plain bf16" -- "$2" "$3"
  ab $1 bwd 16384x2048,16384x4096 "plain fp32" "residual bf16" -- "$2" "$3"
  echo "rows $(( $(date +%s) - t0 )) s"
  python3 $D/../2026-12-03-session45/ab_table.py $OUT/$1
}
bwd_record() {  # name compare compile_budget time_budget: the harness's backward at T 4096, 16384
  # and 65536 (plain and residual, every peer) compared with the record `compare` -> $OUT/name/
  # (session 69, from sessions 62, 67 and 68's call scripts)
  timeout -s KILL $(( $4 + 70 )) python3 -m benchmarks.rmsnorm --device cuda --only bwd \
    --rows 4096,16384,65536 --families plain,residual --candidates ours,aten,compile,liger \
    --ours-backends first_party --compile-budget $3 --time-budget $4 --no-plots \
    --no-host-overhead --compare $2 --out /tmp/$1 > /tmp/$1.log 2>&1 || tail -5 /tmp/$1.log
  mkdir -p $OUT/$1 && cp /tmp/$1/results.* /tmp/$1.log $OUT/$1/ 2>/dev/null
  echo "harness $(( $(date +%s) - t0 )) s"
}
slow_rows() {  # files...: the record rows at 2.85 us or more (ours), "file shape T us"
  local f
  for f in "$@"; do
    grep "^| H=" $f | awk -F'|' -v f=$(basename $f) '{ if ($5+0 >= 2.85) print f, $2, $3, $5 }'
  done
}
overlay_builds() {  # name label: overlay_tree name, its forward modules (labelled) beside every
  overlay_tree $1   # module of the working tree (session 57's review: sessions 54-57's lines)
  fwd_build /tmp/$1 $2 4 & build_tree 12; wait
  echo "builds $(( $(date +%s) - t0 )) s"
}
abba() {  # as ab, with two trees: in the order given, then reversed (A B B A)
  local args=("$@") n=$#
  local first=${args[n-2]} second=${args[n-1]}
  ab "${args[@]:0:n-2}" "$first" "$second"
  ab "${args[@]:0:n-2}" "$second" "$first"
}
gpu_suite() {  # the GPU tests of the working tree -> $OUT/gpu_suite.log, its last lines shown
  timeout -s KILL 240 python3 -m pytest -q -p no:cacheprovider -p no:logging --show-capture=no \
    tests/gpu 2>&1 | tee $OUT/gpu_suite.log | tail -2
  echo "tests $(( $(date +%s) - t0 )) s"
}
split_run() {  # label split shapes: every family, the working tree, MILES_EXT_KERNELS_SPLIT_ROWS
  local fam   # = split unless empty -> $OUT/rows.txt lines "label family weight {json}"
  for fam in "plain bf16" "plain fp32" "residual bf16" "residual fp32"; do
    set -- $1 "$2" $3 $fam
    env ${2:+MILES_EXT_KERNELS_SPLIT_ROWS=$2} timeout -s KILL 120 python3 $ROWS_PY fwd $4 $5 $3 \
      2>/dev/null | sed "s/^/$1 $4 $5 /" >> $OUT/rows.txt
  done
}
rows_run() {  # file label tree family weight shapes [VAR=VALUE...]: rows.py's backward in the tree
  local file=$1 label=$2 tree=$3 fam=$4 wt=$5 shapes=$6  # with the variables set -> $OUT/file
  shift 6                                                # lines "label family weight {json}"
  # ROWS_OP=fwd (session 78) times the forward instead.
  (cd $tree && env "$@" timeout -s KILL 150 python3 $ROWS_PY ${ROWS_OP:-bwd} $fam $wt $shapes \
    2>/dev/null | sed "s/^/$label $fam $wt /") >> $OUT/$file
}
envs() {  # file family weight shapes "LABEL VAR=VALUE..."...: rows_run in the current directory
  local file=$1 fam=$2 wt=$3 shapes=$4 pair  # once per label, its variables set
  shift 4
  for pair in "$@"; do
    set -- $pair
    rows_run $file $1 . $fam $wt $shapes "${@:2}"
  done
}
fwd_small_record() {  # name: the harness's record of the forward at T 1, 16, 64, H 256-4096 (the
  # peer-grid rows; both families and weights; ours, aten, torch.compile, Liger) -> $OUT/name/
  # (sessions 69-70)
  timeout -s KILL 330 python3 -m benchmarks.rmsnorm --device cuda --only fwd --rows 1,16,64 \
    --hidden 256,512,2048,4096 --families plain,residual --weights bf16,fp32 \
    --candidates ours,aten,compile,liger --ours-backends first_party --compile-budget 60 \
    --time-budget 230 --no-plots --no-host-overhead --out /tmp/$1 > /tmp/$1.log 2>&1 \
    || tail -5 /tmp/$1.log
  mkdir -p $OUT/$1 && cp /tmp/$1/results.* /tmp/$1.log $OUT/$1/
  echo "done $(( $(date +%s) - t0 )) s"
}
fwd_twice_run() {  # tree label family shapes [compile]: fwd_twice.py in the tree, BF16 weights,
  # ours only (with `compile` torch.compile too) -> $OUT/twice.txt lines "label family | ..."
  local only=1
  [ "$5" = compile ] && only=
  (cd $1 && FWD_TWICE_OURS_ONLY=$only timeout -s KILL 150 python3 $TWICE_PY $4 bf16 $3 2>&1 \
    | grep -v -i warn | sed "s/^/$2 $3 /") >> $OUT/twice.txt
}
twice_table() {  # $OUT/twice.txt, one line a family, shape and candidate: "label cold/warm" each
  grep -E "\| (ours|compile) \|" $OUT/twice.txt | awk -F'|' '{split($1, f, " ");
    k = f[2] " |" $2 "|" $3; a[k] = a[k] sprintf("%s%s/%s ", f[1], $4, $5)}
    END {for (k in a) print k ": " a[k]}' | sort
}
fwd_step_builds() {  # every module of the working tree (N); /tmp/H, the repository with
  # .device/H's package, and its forward modules at H 256, 512, 2048 and 4096
  copy_tree H
  build_tree 12 &
  build_matching /tmp/H H 4 'miles_rmsnorm_fwd__h(256|512|2048|4096)$' &
  wait
  echo "builds $(( $(date +%s) - t0 )) s"
}
fwd_step_twice() {  # plain_shapes residual_shapes: fwd_twice_run H N N H (after fwd_step_builds)
  local tree
  for tree in "/tmp/H H" ". N" ". N" "/tmp/H H"; do
    fwd_twice_run $tree plain $1
    fwd_twice_run $tree residual $2
  done
  echo "twice $(( $(date +%s) - t0 )) s"
}
patched_tree() {  # name patch...: /tmp/<name>, the repository with the patches applied in order
  local name=$1 patch   # and build.json regenerated (sessions 72-74's landing calls)
  shift
  rm -rf /tmp/$name && cp -r . /tmp/$name || return 1
  for patch in "$@"; do (cd /tmp/$name && git apply $patch) || return 1; done
  (cd /tmp/$name && python3 tools/gen_kernel_build_json.py > /dev/null)
}
land_check() {  # name regex shapes: every module of /tmp/<name> and its GPU suite, the working
  # tree's (M) modules matching regex built beside it; then session 71's bits_ab.py: /tmp/<name>'s
  # dx and dw against the working tree's on the shapes (sessions 72-74's landing calls)
  local bits=$(pwd)/docs/bench/h200/probes/2026-12-05-session71/bits_ab.py
  build_matching . M 4 "$2" &
  (cd /tmp/$1 && build_tree 12)
  wait
  echo "builds $(( $(date +%s) - t0 )) s"
  (cd /tmp/$1 && gpu_suite)
  python3 $bits save /tmp/bits_m.pt $3 | tail -1
  (cd /tmp/$1 && python3 $bits compare /tmp/bits_m.pt $3 | tail -3 | sed "s/^/$1 /")
  echo "bits $(( $(date +%s) - t0 )) s"
}
h200_lines() {  # ops (fwd, bwd or fwd,bwd): on an H200 only, the harness's bandwidth lines on the
  # working tree (ours, plain BF16, T 16384 and 65536 at H 2048 and 4096) -> $OUT/lines (session 78)
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) ;; *) return 0;; esac
  timeout -s KILL 150 python3 -m benchmarks.rmsnorm --device cuda --only $1 \
    --rows 16384,65536 --hidden 2048,4096 --families plain --weights bf16 --candidates ours \
    --ours-backends first_party --no-plots --no-host-overhead --out /tmp/lines \
    > /tmp/lines.log 2>&1 || tail -5 /tmp/lines.log
  mkdir -p $OUT/lines && cp /tmp/lines/results.* /tmp/lines.log $OUT/lines/ 2>/dev/null
  grep -E "Copy ceiling|^\| H=" /tmp/lines/results.md | head -12
  echo "harness $(( $(date +%s) - t0 )) s"
}
