#!/bin/bash
# Session 68: the deterministic backward under MPS with 50% and 25% of the SMs (mps_probe.py),
# against the same process without MPS; then the grid GPU tests under MPS 50%.
source docs/bench/h200/probes/2026-12-03-session42/common.sh
P=docs/bench/h200/probes/2026-12-05-session68
build_matching . M 8 'miles_rmsnorm_bwd__h(2048|4096|8192)(_|$)'
echo "builds $(( $(date +%s) - t0 )) s"
python3 $P/mps_probe.py ref /tmp/mps_ref.pt 2>&1 | tee $OUT/mps.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
which nvidia-cuda-mps-control || { echo "no nvidia-cuda-mps-control"; exit 0; }
nvidia-cuda-mps-control -d && sleep 1
for pct in 50 25; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout -s KILL 90 python3 $P/mps_probe.py mps \
    /tmp/mps_ref.pt 2>&1 | sed "s/^/pct=$pct /" | tee -a $OUT/mps.txt
done
[ -n "$TESTS" ] && CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider \
  tests/gpu/test_rmsnorm_kernel_guarantees.py -k "dw_bits_do_not_depend_on_the_grid and 20011 and not -128" 2>&1 | tail -3 | tee $OUT/mps_tests.txt
echo quit | nvidia-cuda-mps-control
cat $CUDA_MPS_LOG_DIRECTORY/control.log 2>/dev/null | tail -3
echo "done $(( $(date +%s) - t0 )) s"
