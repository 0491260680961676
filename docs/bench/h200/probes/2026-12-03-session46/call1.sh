# Session 46, call 1: fwd_probe4.cu (widened BF16, packed residual, a local tree for the row sum's
# second level) against the package's forward_fixed_kernel. Output: $OUT/call1.txt.
D=docs/bench/h200/probes/2026-12-03-session46
I="-Imiles_ext_kernels/kernels/rmsnorm/include -Idocs/bench/h200/probes"
nvcc -arch=sm_90a -std=c++17 -O3 $I $D/fwd_probe4.cu -o /tmp/fwd_probe4 || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout -s KILL 400 /tmp/fwd_probe4 8 | tee $OUT/call1.txt
