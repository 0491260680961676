#!/bin/bash
# Session 54: on the workstation, before call1.sh (from the repository root). Session 53's prep.sh
# carried four whole packages, which with the tracked tree passed the device's 64 MiB; this keeps
# only each candidate's changed files (the patched header and its regenerated build.json) in
# .device/s2 (one_row_shared_partials.patch), s3 (one_row_dw_pairs.patch) and s4 (both), which
# overlay() lays over a copy of the repository there. HEAD's package is the working tree's.
set -e
bash docs/bench/h200/probes/2026-12-04-session53/prep.sh
for v in s2 s3 s4; do
  (cd .device/$v && find . -type f | while read -r f; do
    if cmp -s "$f" "../head/$f"; then rm "$f"; fi
  done && find . -type f)
done
rm -rf .device/head
du -sh .device
