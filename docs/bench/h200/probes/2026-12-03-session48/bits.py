"""Session 48: the forward's outputs bit for bit between two builds (A: HEAD, W: the working
tree): y, rstd (and h_new) of small batches at H 256-3072 (BITS_H: other sizes), plain and
residual, BF16 and FP32 weights, four contracts. `save FILE` in one tree, `check FILE` in the
other."""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

mode, path = sys.argv[1], sys.argv[2]
dev = torch.device("cuda")
CONTRACTS = [(False, False), (True, False), (False, True), (True, True)]
results = {}
for h in [int(v) for v in os.environ.get("BITS_H", "256,512,1024,1536,3072").split(",")]:
    for t in (1, 3, 16, 64, 255, 1024, 1100):
        for wname in ("bf16", "fp32"):
            for res in (False, True):
                gen = torch.Generator(device=dev).manual_seed(t * 7 + h)
                x = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen) * 3
                u = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen) if res \
                    else None
                wd = torch.bfloat16 if wname == "bf16" else torch.float32
                w = (torch.rand(h, device=dev, generator=gen) + 0.5).to(wd)
                for zc, cast in CONTRACTS:
                    out = rmsnorm_forward(x, w, residual=u, zero_centered_gamma=zc,
                                          cast_before_weight_mul=cast, backend="first_party",
                                          strict=True)
                    results[(h, t, wname, res, zc, cast)] = tuple(o.cpu() for o in out)
torch.cuda.synchronize()


def same(a, b):
    return a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


if mode == "save":
    torch.save(results, path)
    print(f"saved {len(results)} cases")
else:
    ref = torch.load(path)
    bad = [k for k, outs in results.items()
           if len(outs) != len(ref[k]) or not all(same(a, b) for a, b in zip(outs, ref[k]))]
    print(f"{len(results) - len(bad)} of {len(results)} cases bit-equal; differ: {bad[:5]}")
