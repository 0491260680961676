#!/bin/bash
# Session 55's next call (written, not run: the session's device time was spent): 8 rows of one
# warp a CTA from 65 rows instead of 257 (fixed_rows_min_64.patch: forward_policy.h, the spec
# mirror, the host parity test's row counts and the GPU test's edge calls). On the workstation
# first: `git apply` the patch, regenerate build.json (tools/gen_kernel_build_json.py), and put
# HEAD's forward_policy.h in .device/a. Carry .whl and .device. The GPU suite on the patched
# tree, then rows.py's forward A (HEAD) B (patched) at T 64-1024, H 256 and 512, A B B A.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds a A
gpu_suite
S=64x256,65x256,96x256,128x256,192x256,256x256,257x256,512x256
S=$S,64x512,65x512,96x512,128x512,192x512,256x512,257x512,512x512
F=("plain bf16" "plain fp32" "residual bf16")
abba rows.txt fwd $S "${F[@]}" -- "/tmp/a A" ". B"
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
