#!/bin/bash
# Session 59's prepared follow-up to call2.sh (not run): the harness's backward at T 4096, 16384
# and 65536 with the peers on main + fold_tree.patch. Session 60's call_h.sh runs it (LAYERS=B;
# its default, C, adds large_chunks.patch), self-contained on a fresh machine.
LAYERS=B exec bash docs/bench/h200/probes/2026-12-04-session60/call_h.sh
