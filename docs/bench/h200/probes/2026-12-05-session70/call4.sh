#!/bin/bash
# Session 70, call 4 (about 5 minutes): step 105 (N, the working tree: rstd_fast's reciprocal
# seeded with rsqrt.approx's y, no rcp.approx; rstd_fast_range rejects the four floats every two
# binades that call 2's rstd_check.cu found it rounding the other way) against step 104 (H, the
# package from `git archive HEAD` in .device/H): every module of N; fwd_twice.py H N N H (ours;
# the one-row, 8-rows-a-CTA and warp-rows kernels); the GPU suite on N, whose
# test_rstd_fast_matches_the_ieee_rstd_on_every_float_of_its_range checks the new sequence on
# every float of the range.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
copy_tree H
build_tree 12 &
build_matching /tmp/H H 4 'miles_rmsnorm_fwd__h(256|512|2048|4096)$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
twice() {  # tree label family shapes
  (cd $1 && FWD_TWICE_OURS_ONLY=1 timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py $4 bf16 \
    $3 2>&1 | grep -v -i warn | sed "s/^/$2 $3 /") >> $OUT/twice.txt
}
for tree in "/tmp/H H" ". N" ". N" "/tmp/H H"; do
  set -- $tree
  twice $1 $2 plain 1x256,16x256,1x512,16x512,64x512,256x256,1024x512,8192x256,4096x512
  twice $1 $2 residual 1x256,16x512
done
echo "twice $(( $(date +%s) - t0 )) s"
gpu_suite
grep -E "rstd_fast|failed|passed" $OUT/gpu_suite.log | tail -3
grep -E "\| ours \|" $OUT/twice.txt | awk -F'|' '{split($1, f, " ");
  k = f[2] " |" $2 "|" $3; a[k] = a[k] sprintf("%s%s/%s ", f[1], $4, $5)}
  END {for (k in a) print k ": " a[k]}' | sort
