# Session 58: sourced after common.sh. modes FILE FAMILY WEIGHT SHAPES MODE...: rows.py's backward
# in the current directory once per MEK_PROBE_ROW_BLOCK mode (-1: contiguous chunks, k >= 0:
# blocks of 2^k rows dealt to the chunks in turn), in the order given -> $OUT/FILE lines
# "m<MODE> family weight {json}".
modes() {
  local file=$1 fam=$2 wt=$3 shapes=$4 m
  shift 4
  for m in "$@"; do
    MEK_PROBE_ROW_BLOCK=$m timeout -s KILL 120 python3 $ROWS_PY bwd $fam $wt $shapes 2>/dev/null \
      | sed "s/^/m$m $fam $wt /" >> $OUT/$file
  done
}
bwd_build() {  # tree label: the tree's backward programs (deterministic and small-batch)
  local mods
  mods=$(cd $1 && python3 -c "
import json, re
d = json.load(open('$PKG/build.json'))
print(' '.join('--module ' + m for m in d['modules']
               if re.match(r'miles_rmsnorm_bwd(_small)?__h(2048|256)$', m)))")
  (cd $1 && timeout -s KILL 400 python3 -m miles_ext_kernels.cake build --arch sm_90a \
    --jobs 16 $mods > /tmp/build_$2.log 2>&1 || { tail -20 /tmp/build_$2.log; exit 1; })
}
envs() {  # FILE FAMILY WEIGHT SHAPES "LABEL VAR=VALUE"...: rows.py's backward in the current
  local file=$1 fam=$2 wt=$3 shapes=$4 pair  # directory once per label, its variable set
  shift 4
  for pair in "$@"; do
    set -- $pair
    env $2 timeout -s KILL 150 python3 $ROWS_PY bwd $fam $wt $shapes 2>/dev/null \
      | sed "s/^/$1 $fam $wt /" >> $OUT/$file
  done
}
