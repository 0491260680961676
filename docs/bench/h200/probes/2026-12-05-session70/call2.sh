#!/bin/bash
# Session 70, call 2 (about 6 minutes): step 104 (N, the working tree: warp_row_rstd, call 1's S1
# kept to the kernels whose rows take at most one warp) against main's step 103 (H, the package
# from `git archive HEAD` in .device/H). rstd_check.cu again, with one_mufu's differing floats by
# mantissa and exponent parity; every module of N; fwd_twice.py H N N H (ours), torch.compile once
# on N; the GPU suite on N.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session70
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
nvcc -arch=sm_90a -O3 -std=c++17 $P/rstd_check.cu -o /tmp/rstd_check && /tmp/rstd_check \
  > $OUT/rstd_check.txt
copy_tree H
build_tree 12 &
build_matching /tmp/H H 4 'miles_rmsnorm_fwd__h(256|512|2048|4096)$' &
wait
echo "builds $(( $(date +%s) - t0 )) s"
twice() {  # tree label family shapes [compile: torch.compile too]
  local only=1
  [ "$5" = compile ] && only=
  (cd $1 && FWD_TWICE_OURS_ONLY=$only timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py \
    $4 bf16 $3 2>&1 | grep -v -i warn | sed "s/^/$2 $3 /") >> $OUT/twice.txt
}
twice . N plain 1x256,16x256,1x512,16x512 compile
for tree in "/tmp/H H" ". N" ". N" "/tmp/H H"; do
  set -- $tree
  twice $1 $2 plain 1x256,16x256,1x512,16x512,64x512,1x2048,16x2048,16x4096,1024x512
  twice $1 $2 residual 1x256,16x512
done
echo "twice $(( $(date +%s) - t0 )) s"
gpu_suite
cat $OUT/rstd_check.txt
grep -E "\| (ours|compile) \|" $OUT/twice.txt | awk -F'|' '{split($1, f, " ");
  k = f[2] " |" $2 "|" $3; a[k] = a[k] sprintf("%s%s/%s ", f[1], $4, $5)}
  END {for (k in a) print k ": " a[k]}' | sort
