# Session 41: sourced by the call scripts with a variant name (a package copy under .device/):
# installs tvm-ffi, sets the environment, puts the variant's package in place of the working
# tree's and builds its forward program for sm_90a. Sets D (this directory) and PKG.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16
D=docs/bench/h200/probes/2026-12-03-session41
PKG=miles_ext_kernels/kernels/rmsnorm
rm -rf $PKG && cp -r .device/$1/$PKG $PKG
t0=$(date +%s)
timeout -s KILL 300 python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 \
  --module miles_rmsnorm_fwd > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
