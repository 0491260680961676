#!/bin/bash
# Session 56 call 1: session 55's next.sh as written there: 8 rows of one warp a CTA from 65 rows
# instead of 257 (session 55's fixed_rows_min_64.patch applied to the working tree; HEAD's
# forward_policy.h in .device/a). The GPU suite on the patched tree, then rows.py's forward A
# (HEAD) B (patched) at T 64-1024, H 256 and 512, A B B A.
exec bash docs/bench/h200/probes/2026-12-04-session55/next.sh
