#!/bin/bash
# Session 53: on the workstation, before next.sh's device call (from the repository root): HEAD's
# package in .device/head and the three candidates from this directory's patches in .device/s2
# (one_row_shared_partials.patch), .device/s3 (one_row_dw_pairs.patch) and .device/s4
# (one_row_both.patch), each with its build.json regenerated (a stale one fails the build's
# integrity check).
set -e
P=docs/bench/h200/probes/2026-12-04-session53
for v in head s2 s3 s4; do
  rm -rf .device/$v && mkdir -p .device/$v
  git archive HEAD miles_ext_kernels/kernels/rmsnorm | tar -x -C .device/$v
done
(cd .device/s2 && patch -p1 -s < ../../$P/one_row_shared_partials.patch)
(cd .device/s3 && patch -p1 -s < ../../$P/one_row_dw_pairs.patch)
(cd .device/s4 && patch -p1 -s < ../../$P/one_row_both.patch)
for v in s2 s3 s4; do
  cp -r tools .device/$v/ && (cd .device/$v && python3 tools/gen_kernel_build_json.py) \
    && rm -rf .device/$v/tools
done
