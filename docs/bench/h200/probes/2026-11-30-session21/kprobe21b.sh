#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
swap_to_a() { mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG; }
swap_to_b() { rm -rf $PKG && mv /tmp/pkgB $PKG; }
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
swap_to_a; python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1; swap_to_b
echo "== B (fixed residual)"; python3 .device/kprobe21b.py 2>&1 | grep -v "Warn\|warn\|capture_end" | tee $OUT/kprobeB.txt
swap_to_a; echo "== A (HEAD)"; ONLY_OURS=1 python3 .device/kprobe21b.py 2>&1 | grep -v "Warn\|warn\|capture_end" | tee $OUT/kprobeA.txt; swap_to_b
