#!/bin/bash
# Session 24, call 7: the multi-cluster fold one column a thread where the CTA has a thread for
# every column of its slice (B) against HEAD dd4291a (A), T = 64 and 256, one pass, no suite.
NO_SUITE=1 PASSES=1 FAMILIES=plain,residual,per_head_contig,per_head_strided ROWS=64,256 HIDDEN=256,1024,2048,4096,5120,6144,8192 bash .device/ab22.sh
