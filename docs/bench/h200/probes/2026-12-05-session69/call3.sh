#!/bin/bash
# Session 69, call 3 (about 8 minutes): step 102 (ForwardParams reordered so that a plain one-row
# forward_fixed_kernel call reads one constant line, and no row count) against HEAD (.device/H's
# package): builds, the GPU suite on the new tree, floor.py with both builds of floor.cu,
# fwd_twice.py in both trees, rows.py A N N A at T 1-64.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session69
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
copy_tree H
build_matching /tmp/H H 4 'miles_rmsnorm_fwd__h(256|512|2048|4096)' &
build_tree 12
wait
for v in head new; do
  inc=$PKG/include; [ $v = head ] && inc=.device/H/$PKG/include
  nvcc -arch=sm_90a -O3 -std=c++17 --prec-div=true --prec-sqrt=true --ftz=false -shared \
    -Xcompiler -fPIC -I $inc $P/floor.cu -o /tmp/floor_$v.so || exit 1
done
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
timeout -s KILL 200 python3 $P/floor.py /tmp/floor_head.so,/tmp/floor_new.so 1,16 2>&1 \
  | grep -v -i warn > $OUT/floor.txt
echo "floor $(( $(date +%s) - t0 )) s"
for tree in "/tmp/H H" ". N"; do
  set -- $tree
  for w in bf16 fp32; do
    (cd $1 && timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py \
      1x256,16x256,1x512,16x512,1x2048,16x4096 $w 2>&1 | grep -v -i warn | sed "s/^/$2 /") \
      >> $OUT/twice.txt
  done
done
echo "twice $(( $(date +%s) - t0 )) s"
SH=1x256,16x256,64x256,1x512,16x512,64x512,1x2048,16x2048,1x4096,16x4096
abba r.txt fwd $SH "plain bf16" -- "/tmp/H H" ". N"
ab r.txt fwd $SH "plain fp32" "residual bf16" -- "/tmp/H H" ". N"
echo "rows $(( $(date +%s) - t0 )) s"
cat $OUT/floor.txt
grep -E "\| (1|16) x (256|512) \| ours" $OUT/twice.txt
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/r.txt
