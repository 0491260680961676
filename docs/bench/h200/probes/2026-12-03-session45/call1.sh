# Session 45, call 1: fwd_probe.cu (timing and stamped builds), 64 x 4096 / 6144 / 8192 and
# 48 x 6144, residual BF16. Output: $OUT/call1.txt.
D=docs/bench/h200/probes/2026-12-03-session45
I="-Imiles_ext_kernels/kernels/rmsnorm/include -Idocs/bench/h200/probes"
nvcc -arch=sm_90a -std=c++17 -O3 $I $D/fwd_probe.cu -o /tmp/fwd_probe &
nvcc -arch=sm_90a -std=c++17 -O3 -DSTAMPS $I $D/fwd_probe.cu -o /tmp/fwd_probe_st &
wait
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout -s KILL 200 /tmp/fwd_probe | tee $OUT/call1.txt
timeout -s KILL 200 /tmp/fwd_probe_st | tee $OUT/call1_stamps.txt
