#!/bin/bash
# Session 51 call 1: HEAD's GPU suite (session 50's test refactor had not run on the device), then
# what Inductor runs where torch.compile leads the forward at H 256 and 512.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
build_tree 16
echo "builds $(( $(date +%s) - t0 )) s"
gpu_suite
P=docs/bench/h200/probes/2026-12-03-session51
for w in bf16 fp32; do
  timeout -s KILL 200 python3 $P/inductor_dump.py 1024x256,4096x256,16384x256,65536x256,1024x512,4096x512,16384x512 $w \
    > $OUT/inductor_$w.txt 2>&1 || tail -5 $OUT/inductor_$w.txt
  echo "inductor $w $(( $(date +%s) - t0 )) s"
done
grep -h "^KERNEL\|^TIMES" $OUT/inductor_*.txt | cut -c1-300
