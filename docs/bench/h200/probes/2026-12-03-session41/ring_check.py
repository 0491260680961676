"""Session 41: the probe ring (MILES_PROBE_RING_D) against the launcher's kernel, bit for bit:
y and rstd at H 128-1024, plain, per-head strided and contiguous views, three contracts, BF16 and
FP32 weights. Run twice: `save FILE` without the probe variables, `check FILE` with them."""
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

mode, path = sys.argv[1], sys.argv[2]
label = " ".join(f"{k}={v}" for k, v in os.environ.items() if k.startswith("MILES_PROBE"))
dev = torch.device("cuda")
cases = []
for h in (128, 256, 264, 512, 1024):
    for t in (16421, 20011, 65536):
        cases.append(("plain", t, h))
cases += [("phs", 16384, 256), ("phc", 16384, 256), ("phs", 4096, 128)]
results = {}
for fam, t, h in cases:
    for wname in ("bf16", "fp32"):
        for contract in ((False, False), (True, False), (False, True)):
            gen = torch.Generator(device=dev).manual_seed(t * 7 + h)
            if fam == "phs":
                x = torch.randn(t, 32, h, device=dev, dtype=torch.bfloat16, generator=gen)[:, :24]
            elif fam == "phc":
                x = torch.randn(t, 4, h, device=dev, dtype=torch.bfloat16, generator=gen)
            else:
                x = torch.randn(t, h, device=dev, dtype=torch.bfloat16, generator=gen) * 3
            wd = torch.bfloat16 if wname == "bf16" else torch.float32
            w = (torch.rand(h, device=dev, generator=gen) + 0.5).to(wd)
            y, rstd = rmsnorm_forward(x, w, zero_centered_gamma=contract[0],
                                      cast_before_weight_mul=contract[1],
                                      backend="first_party", strict=True)
            results[(fam, t, h, wname, contract)] = (y.cpu(), rstd.cpu())
torch.cuda.synchronize()
if mode == "save":
    torch.save(results, path)
    print(f"saved {len(results)} cases")
else:
    ref = torch.load(path)
    bad = [k for k, (y, r) in results.items()
           if not (torch.equal(y.view(torch.int16), ref[k][0].view(torch.int16))
                   and torch.equal(r.view(torch.int32), ref[k][1].view(torch.int32)))]
    print(f"{label}:"
          f" {len(results) - len(bad)} of {len(results)} cases bit-equal; differ: {bad[:5]}")
