#!/bin/bash
# Session 53 call 4: step 88 as kept against HEAD's kernels (.device/head), the checks of call 3
# (call3.sh, run as is): call 3's sources (rstd tied to the row sum, the pow2 coefficient, the
# one-warp width at compile time) with each row's sum taken on every thread and selected, so that
# dx reuses its widened g, x and g * w. Bits at T 1-64, the GPU suite, rows.py A/B, torch.compile
# beside it at T = 1.
exec bash docs/bench/h200/probes/2026-12-04-session53/call3.sh
