#!/bin/bash
# Prepared in session 69 for the next device session (about 6 minutes, any card): the one-warp
# row sum from shared memory in forward_fixed_kernel (warp_tree_sum.patch: the butterfly's tree,
# same bits; floor.cu measured 0.03 us on the hand-written row, call 6) against main. S = main
# with the patch in /tmp/S: every module of S built, fwd_twice.py (ours only) in both trees,
# M S S M, at T 1-64 and the 8-rows-a-CTA calls; the GPU suite on S.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session69
P68=docs/bench/h200/probes/2026-12-05-session68
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
rm -rf /tmp/S && cp -r . /tmp/S && (cd /tmp/S && patch -p1 -s < $P/warp_tree_sum.patch \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
(cd /tmp/S && build_tree 12) &
build_matching . M 4 'miles_rmsnorm_fwd__h256'
wait
echo "builds $(( $(date +%s) - t0 )) s"
twice() {  # tree label family weight shapes
  (cd $1 && FWD_TWICE_OURS_ONLY=1 timeout -s KILL 150 python3 $OLDPWD/$P68/fwd_twice.py $5 $4 \
    $3 2>&1 | grep -v -i warn | sed "s/^/$2 /") >> $OUT/twice.txt
}
SH=1x256,16x256,64x256,1x512,16x512,64x512,256x256,1024x512
for tree in ". M" "/tmp/S S" "/tmp/S S" ". M"; do
  set -- $tree
  twice $1 $2 plain bf16 $SH
  twice $1 $2 residual bf16 1x256,16x256,1x512,16x512
done
echo "twice $(( $(date +%s) - t0 )) s"
(cd /tmp/S && gpu_suite)
grep -E "\| ours \|" $OUT/twice.txt | sort -t'|' -k2,2 | head -60
