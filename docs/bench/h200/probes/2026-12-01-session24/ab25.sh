#!/bin/bash
# Session 24, call 1: B (more clusters at narrow H, wide windows at H <= 2048) against HEAD (A).
SUITE_FIRST=1 PASSES=1 FAMILIES=plain ROWS=256,384,512,768,1024,1536,2048,3072,4096 HIDDEN=256,512 HARNESS="python3 docs/bench/h200/probes/2026-12-01-session23/rows_ab.py" bash .device/ab22.sh
