#!/bin/bash
# Session 55 call 1: session 54's next.sh as written there: the GPU suite on step 89's sources
# plus session 54's ForwardParams reorder (forward_params_order.patch applied in the working
# tree: the row groups' fields before the row addresses, BackwardParams' order), then rows.py's
# forward at T 1, 16 and 64 (two passes), A HEAD's params.h (.device/a) against B the patched tree.
exec bash docs/bench/h200/probes/2026-12-04-session54/next.sh
