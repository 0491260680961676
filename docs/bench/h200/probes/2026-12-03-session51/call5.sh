#!/bin/bash
# Session 51 call 5: Inductor's kernel for the forward at 16384 x 256 and 16384 x 512 (BF16 and FP32
# weights) as PTX and SASS, to compare with ours (calls 2-4: its layout in our code is slower).
source docs/bench/h200/probes/2026-12-03-session42/common.sh
export TRITON_CACHE_DIR=/tmp/tc
for w in bf16 fp32; do
  timeout -s KILL 120 python3 docs/bench/h200/probes/2026-12-03-session51/inductor_dump.py \
    16384x256,16384x512 $w 2>&1 | grep "^TIMES"
done
mkdir -p $OUT/inductor
for f in $(find /tmp/tc -name "*.ptx"); do cp $f $OUT/inductor/; done
for f in $(find /tmp/tc -name "*.cubin"); do
  cuobjdump -sass $f > $OUT/inductor/$(basename $f .cubin).sass 2>/dev/null
done
ls -la $OUT/inductor | head
