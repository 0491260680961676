#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. MILES_EXT_KERNELS_CACHE=/tmp/mek-cache MILES_EXT_KERNELS_JOBS=16 PYTHONUNBUFFERED=1
PKG=miles_ext_kernels/kernels/rmsnorm
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
mv $PKG /tmp/pkgB && cp -r .device/pkgA/$PKG $PKG
python3 -m miles_ext_kernels.cake build --arch sm_90a --jobs 16 --module miles_rmsnorm_fwd >/dev/null || exit 1
TAG=A python3 .device/probe20.py 2>&1 | grep -v Warn > $OUT/probeA.txt
rm -rf $PKG && mv /tmp/pkgB $PKG
TAG=B ONLY_OURS=1 python3 .device/probe20.py 2>&1 | grep -v Warn > $OUT/probeB.txt
python3 - <<'PY'
import os
def load(f):
    d={}
    for l in open(f):
        p=l.split()
        if len(p)>=4 and 'x' in p[0] and p[0][0].isdigit(): d[(p[0],p[1])]=(float(p[2]),float(p[3]))
    return d
o=os.environ['OUT']; a=load(o+'/probeA.txt'); b=load(o+'/probeB.txt')
shapes=sorted({k[0] for k in a}, key=lambda s:tuple(map(int,s.split('x'))))
print(f"{'shape':10s} {'A cold':>7s} {'B cold':>7s} {'comp':>7s} {'liger':>7s} | warm A B comp liger")
for s in shapes:
    g=lambda k,i: a.get((s,k),b.get((s,k),(float('nan'),)*2))[i]
    print(f"{s:10s} {g('oursA',1):7.2f} {g('oursB',1):7.2f} {g('compileA',1):7.2f} {g('ligerA',1):7.2f} | {g('oursA',0):5.2f} {g('oursB',0):5.2f} {g('compileA',0):5.2f} {g('ligerA',0):5.2f}")
PY
