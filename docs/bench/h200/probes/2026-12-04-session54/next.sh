#!/bin/bash
# Session 54's next call (written, not run): ForwardParams in BackwardParams' order
# (forward_params_order.patch: the row groups' fields out of the third constant line) against
# HEAD's forward. On the workstation first: `git apply` the patch, regenerate build.json
# (tools/gen_kernel_build_json.py), and put HEAD's params.h in .device/a (`mkdir -p` its folder;
# `git show HEAD:<path> > .device/a/<path>`). Carry .whl and .device. The GPU suite on the
# patched tree, then rows.py's forward at T 1, 16 and 64 (two passes), A HEAD, B patched.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
overlay_builds a A  # common.sh's since sessions 55 and 57: the same commands
gpu_suite
S=1x256,1x1024,1x2048,1x4096,1x8192,16x512,16x2048,16x6144,64x256,64x1536,64x4096,64x8192
for pass in 1 2; do
  ab rows.txt fwd $S "plain bf16" "plain fp32" "residual bf16" -- "/tmp/a A" ". B"
done
echo "ab $(( $(date +%s) - t0 )) s"
python3 docs/bench/h200/probes/2026-12-03-session45/ab_table.py $OUT/rows.txt
