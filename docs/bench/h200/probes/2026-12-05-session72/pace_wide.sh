#!/bin/bash
# Session 72 (about 3-4 minutes): pace.patch (slack 1) against main at step 101's shapes (every
# hidden size the patch reaches: H 2048, 4096, 8192), bits first.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
Q=$(pwd)/docs/bench/h200/probes/2026-12-05-session71
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
rm -rf /tmp/P && cp -r . /tmp/P && (cd /tmp/P && git apply $Q/pace.patch \
  && python3 tools/gen_kernel_build_json.py > /dev/null) || exit 1
build_matching /tmp/P P 8 'miles_rmsnorm_bwd__h(2048|4096|8192)$' &
build_matching . M 8 'miles_rmsnorm_bwd__h(2048|4096|8192)$'
wait
echo "builds $(( $(date +%s) - t0 )) s"
SH=16384x4096,16384x8192
python3 $Q/bits_ab.py save /tmp/bits_m.pt $SH | tail -1
(cd /tmp/P && python3 $Q/bits_ab.py compare /tmp/bits_m.pt $SH | tail -3 | sed "s/^/P /")
bwd_ab pw.txt ". M" "/tmp/P P"
