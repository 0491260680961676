"""Session 53: the backward's dx and dw bit for bit between two builds, as position-weighted
checksums computed on the GPU: at BWD_BITS_CALLS ("TxH,..."), plain and residual, BF16 and FP32
weights, four contracts, inputs with a wide range (and one all-zero row where T > 1).
`save FILE` in one tree, `check FILE` in the other."""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward

mode, path = sys.argv[1], sys.argv[2]
dev = torch.device("cuda")
CONTRACTS = [(False, False), (True, False), (False, True), (True, True)]


def checksum(t: torch.Tensor) -> tuple[int, int]:
    """Sum and position-weighted sum of a tensor's bit patterns."""
    v = t.contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32).flatten()
    v = v.to(torch.int64)
    pos = torch.arange(v.numel(), device=v.device, dtype=torch.int64) % 65521 + 1
    return int(v.sum()), int((v * pos).sum())


results = {}
for call in os.environ["BWD_BITS_CALLS"].split(","):
    t, h = (int(v) for v in call.split("x"))
    for wname in ("bf16", "fp32"):
        for res in (False, True):
            gen = torch.Generator(device=dev).manual_seed(t * 7 + h)
            x = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen) * 3
            if t > 1:
                x[t // 2] = 0
            g = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen)
            gh = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen) if res else None
            wd = torch.bfloat16 if wname == "bf16" else torch.float32
            w = (torch.rand(h, device=dev, generator=gen) + 0.5).to(wd)
            rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
            for zc, cast in CONTRACTS:
                out = rmsnorm_backward(g, x, w, rstd, g_residual=gh, zero_centered_gamma=zc,
                                       cast_before_weight_mul=cast, backend="first_party",
                                       strict=True)
                results[(t, h, wname, res, zc, cast)] = tuple(checksum(o) for o in out[:2])
if mode == "save":
    torch.save(results, path)
    print(f"bits saved: {len(results)} calls")
else:
    ref = torch.load(path)
    diff = [k for k in results if ref.get(k) != results[k]]
    print(f"bits: {len(results) - len(diff)} of {len(results)} calls identical; differ: {diff[:8]}")
