#!/bin/bash
# Session 34, call 6: the small-batch forward's rows split over two CTAs of a cluster
# (MILES_EXT_KERNELS_SPLIT_ROWS=2) against the launcher's choice (one CTA a row at these shapes),
# rows.py in A B B A order, one build (the choice changes no bit).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd \
  > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
R=docs/bench/h200/probes/2026-12-02-session34/rows.py
for args in "fwd plain fp32 64x8192,48x8192,64x6144,64x5120" "fwd plain bf16 64x8192,64x6144" \
            "fwd residual bf16 64x6144,64x8192"; do
  for s in 0 2 2 0; do
    echo "split=$s $args $(MILES_EXT_KERNELS_SPLIT_ROWS=$s python3 $R $args 2>&1 | tail -1)"
  done
done | tee $OUT/call6.txt
