# Session 45, call 6: fwd_probe3.cu (a programmatic dependent launch of the residual fixed kernel
# after a 256 MB fill kernel, with and without an L2 prefetch before griddepcontrol.wait).
D=docs/bench/h200/probes/2026-12-03-session45
nvcc -arch=sm_90a -std=c++17 -O3 -Imiles_ext_kernels/kernels/rmsnorm/include \
  -Idocs/bench/h200/probes $D/fwd_probe3.cu -o /tmp/fwd_probe3 || exit 1
timeout -s KILL 200 /tmp/fwd_probe3 | tee $OUT/call6.txt
