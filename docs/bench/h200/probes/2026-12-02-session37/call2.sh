#!/bin/bash
# Session 37 call 2: torch.compile's forward kernels (inductor code, PTX) for the large-T rows
# where it leads; then y / h_new stored with st.global.cs (.device/cs) against the working tree
# at large T (B V V B, session 34's rows_ab.sh).
S34=docs/bench/h200/probes/2026-12-02-session34
D=docs/bench/h200/probes/2026-12-02-session37
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tric timeout -s KILL 120 python3 $D/tc_dump.py
mkdir -p $OUT/tc && find /tmp/ind /tmp/tric \( -name "*.py" -o -name "*.ptx" -o -name "*.json" \) -size -400k \
  -exec cp {} $OUT/tc/ \; ; ls $OUT/tc | head -40
V=cs MODULES=miles_rmsnorm_fwd RUNS="fwd plain bf16 16384x8192,65536x8192,16384x4096,16384x2048;fwd residual bf16 16384x4096,4096x6144,16384x6144" \
  timeout -s KILL 420 bash $S34/rows_ab.sh 2>&1 | grep -v "^B \|^cs "
