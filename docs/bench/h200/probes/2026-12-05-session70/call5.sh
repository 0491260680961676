#!/bin/bash
# Session 70, call 5 (about 5 minutes): call 4's script again, with step 105 as landed (N:
# rstd_seeded, the reciprocal seeded with rsqrt.approx's y, in warp_row_rstd only; rows_rstd, the
# warp-rows kernel's, keeps rstd_fast, which call 4 found 0.13 us slower warm at 8192 x 256 with
# the seeded sequence's longer range test) against step 104 (H, .device/H): every module of N;
# fwd_twice.py H N N H; the GPU suite on N (its exhaustive test checks both sequences).
bash docs/bench/h200/probes/2026-12-05-session70/call4.sh
