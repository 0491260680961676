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
  build_matching $1 $2 16 'miles_rmsnorm_bwd(_small)?__h(2048|256)$'
}
