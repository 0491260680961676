#!/bin/bash
# Session 32: A/B of two builds of the first-party package. B: the working tree; A: .device/pkgA,
# a `git archive` of the commit before (`git archive HEAD miles_ext_kernels | tar -x -C
# .device/pkgA`). variants.sh with the one variant pkgA: each set runs B A A B (the order's bias
# cancels) and ab.py prints the rows. Run from the repository root on the GPU machine, .whl and
# .device carried. SETS, ONLY, SUITE, MODULES, TIME_BUDGET: as variants.sh takes them.
VARIANTS=pkgA exec bash docs/bench/h200/probes/2026-12-02-session32/variants.sh
