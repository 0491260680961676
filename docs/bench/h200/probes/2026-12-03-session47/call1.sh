#!/bin/bash
# Session 47, call 1: the half-warp forward (N: working tree) against HEAD 74e13f4 (A: .device/A47)
# on the plain rows of one warp past the spread window (rows.py A N N A), the loop-free forward's
# bit tests at H <= 256, then the harness with Liger and torch.compile at H 256 and 512.
# Run from the repository root, .whl (tvm-ffi, Liger) and .device carried.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
copy_tree A47 || exit 1
fwd_build /tmp/A47 A & fwd_build . N & wait
echo "builds $(( $(date +%s) - t0 )) s"
S="1024x256,4096x256,8192x256,16384x256,65536x256,16384x200,65536x200,65536x128,65536x512"
ab rows.txt fwd $S "plain bf16" "plain fp32" -- "/tmp/A47 A" ". N" ". N" "/tmp/A47 A"
ab rows.txt fwd "256x256,1024x256" "phs bf16" -- "/tmp/A47 A" ". N" ". N" "/tmp/A47 A"
echo "rows $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_rmsnorm_kernel_guarantees.py \
  -k "loop_free or fp32_weight_forward or per_head or batch_invariance or million" 2>&1 | tail -3
echo "tests $(( $(date +%s) - t0 )) s"
timeout -s KILL 200 python3 -m benchmarks.rmsnorm --device cuda --only fwd --hidden 256,512 \
  --rows 4096,16384,65536 --families plain --candidates ours,liger,compile \
  --ours-backends first_party --no-plots --no-host-overhead --out /tmp/peers > /tmp/peers.log 2>&1 \
  || tail -5 /tmp/peers.log
cp /tmp/peers/results.md $OUT/peers.md; cp /tmp/peers/results.json $OUT/peers.json
echo "peers $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt | tee $OUT/table.txt
grep "^| H=" $OUT/peers.md
