#!/bin/bash
# Session 70, call 1 (about 6 minutes): step 103's one-warp row sum from shared memory is main's
# forward (M). Two rstd candidates on top, each the same bits as 1.0f / sqrtf on sm_90:
#   S1 (rstd_branch_free.patch): row_rstd computes rstd_fast always and takes 1.0f / sqrtf only
#      outside its range, a branch after the sequence (ptxas's own puts a range test and a branch
#      between the root and the reciprocal);
#   S2 (rstd_short.patch): S1 with rstd_fast's reciprocal seeded by rsqrt.approx's y, no
#      rcp.approx (rstd_check.cu: do both sequences give the IEEE bits on every float of the
#      range?).
# fwd_twice.py (ours only; torch.compile once) M S1 S2 S2 S1 M; the GPU suite on S2, whose
# test_rstd_fast_matches_the_ieee_rstd_on_every_float_of_its_range checks its rstd_fast.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session70
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
nvcc -arch=sm_90a -O3 -std=c++17 $P/rstd_check.cu -o /tmp/rstd_check && /tmp/rstd_check \
  | tee $OUT/rstd_check.txt
for tree in "S1 rstd_branch_free" "S2 rstd_short"; do
  set -- $tree
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && (cd /tmp/$1 && patch -p1 -s < $P/$2.patch \
    && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
done
FWD='miles_rmsnorm_fwd__h(256|512|2048|4096)$'
(cd /tmp/S2 && build_tree 10) &
build_matching . M 3 "$FWD" &
build_matching /tmp/S1 S1 3 "$FWD" &
wait
echo "builds $(( $(date +%s) - t0 )) s"
twice() {  # tree label family shapes [all: torch.compile too]
  (cd $1 && FWD_TWICE_OURS_ONLY=${5:-1} timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py \
    $4 bf16 $3 2>&1 | grep -v -i warn | sed "s/^/$2 $3 /") >> $OUT/twice.txt
}
twice . M plain 1x256,16x256,1x512,16x512 ""
for tree in ". M" "/tmp/S1 S1" "/tmp/S2 S2" "/tmp/S2 S2" "/tmp/S1 S1" ". M"; do
  set -- $tree
  twice $1 $2 plain 1x256,16x256,1x512,16x512,64x512,1x2048,16x4096,1024x512
  twice $1 $2 residual 1x256,16x512
done
echo "twice $(( $(date +%s) - t0 )) s"
(cd /tmp/S2 && gpu_suite)
cat $OUT/rstd_check.txt
grep -E "\| (ours|compile) \|" $OUT/twice.txt | awk -F'|' '{split($1, f, " ");
  k = f[2] " |" $2 "|" $3; a[k] = a[k] sprintf("%s%s/%s ", f[1], $4, $5)}
  END {for (k in a) print k ": " a[k]}' | sort
