#!/bin/bash
# Session 54 call 4: step 89, what call 3's ncu runs pointed at (the one-row backward waited on
# the constant load of its flags): A HEAD's kernels (.device/a), B BackwardParams reordered so that
# the pointers, rows, hidden size and flags share the first two 64-byte constant lines (.device/b),
# C (the working tree) B plus the one-row kernel's contract at compile time. The GPU suite on C,
# rows.py at T = 1 (two passes), torch.compile beside C (bwd_t1.py).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-04-session53
tree() {  # name: /tmp/<name> with .device/<name> laid over the repository, its build.json regenerated
  rm -rf /tmp/$1 && cp -r . /tmp/$1 && cp -r .device/$1/. /tmp/$1/ \
    && (cd /tmp/$1 && python3 tools/gen_kernel_build_json.py > /dev/null)
}
tree a; tree b
small /tmp/a A & small /tmp/b B & build_tree 12; wait
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
T1=1x256,1x512,1x1024,1x1536,1x2048,1x4096
for pass in 1 2; do
  ab rows.txt bwd $T1 "plain fp32" "plain bf16" -- "/tmp/a A" "/tmp/b B" ". C"
done
echo "ab $(( $(date +%s) - t0 )) s"
timeout -s KILL 100 python3 $Q/bwd_t1.py 256,512,1024,1536,2048,4096 fp32 \
  > $OUT/bwd_t1_fp32.txt 2>&1 || tail -5 $OUT/bwd_t1_fp32.txt
echo "t1 $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
grep "^|" $OUT/bwd_t1_fp32.txt
