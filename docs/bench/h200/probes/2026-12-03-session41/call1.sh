#!/bin/bash
# Session 41 call 1: the forward's cp.async ring at H <= 1024 (MILES_PROBE_RING_D stages,
# .device/ring), bits against the launcher's kernel, then times: base (no probe variable), D 3/5/8.
set -u
source "$(dirname "$0")/variant.sh" ring
timeout -s KILL 120 python3 $D/ring_check.py save /tmp/ref.pt 2>&1 | tail -2
for d in 3 5 8; do
  MILES_PROBE_RING_D=$d timeout -s KILL 120 python3 $D/ring_check.py check /tmp/ref.pt 2>&1 | tail -2
done
run() {  # label, env..., rows.py args
  local label=$1; shift
  echo "$label $(env "$@" 2>&1 | tail -1)"
}
for v in base D3 D5 D8 base; do
  case $v in base) e="X=0";; D3) e="MILES_PROBE_RING_D=3";; D5) e="MILES_PROBE_RING_D=5";; D8) e="MILES_PROBE_RING_D=8";; esac
  run "$v plain-bf16" $e timeout -s KILL 120 python3 $D/rows.py fwd plain bf16 65536x256,16384x256,4096x256,65536x512,16384x512,65536x128,65536x1024
  run "$v plain-fp32" $e timeout -s KILL 120 python3 $D/rows.py fwd plain fp32 65536x256,16384x256
  run "$v phs-bf16" $e timeout -s KILL 120 python3 $D/rows.py fwd phs bf16 16384x256,4096x256
  run "$v phc-bf16" $e timeout -s KILL 120 python3 $D/rows.py fwd phc bf16 65536x256,16384x256
done
