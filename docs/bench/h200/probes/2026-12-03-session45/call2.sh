# Session 45, call 2: fwd_probe2.cu (the residual fixed kernel's load order), three passes of
# 64 x 6144 / 4096 / 8192, 16 x 6144 and 1 x 6144, stamps in the first. Output: $OUT/call2.txt.
D=docs/bench/h200/probes/2026-12-03-session45
I="-Imiles_ext_kernels/kernels/rmsnorm/include -Idocs/bench/h200/probes"
nvcc -arch=sm_90a -std=c++17 -O3 $I $D/fwd_probe2.cu -o /tmp/fwd_probe2 || exit 1
timeout -s KILL 300 /tmp/fwd_probe2 | tee $OUT/call2.txt
