"""Session 76: the forward's y, rstd (and h_new) of one build saved, or compared bit for bit with a
saved file (plain and residual, weights of the rows' type and FP32, every contract, FP16 rows too). Prints one
summary line and exits 1 on any differing bit.
  python fwd_bits.py save|compare FILE 4096x2048,1024x5120"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

FP = {"backend": "first_party", "strict": True}
mode, path, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
results = {}
for shape in shapes:
    t, h = map(int, shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(t + h)
    for x_dtype in (torch.bfloat16, torch.float16):
        x = torch.randn(t, h, device="cuda", generator=gen).to(x_dtype)
        u = torch.randn(t, h, device="cuda", generator=gen).to(x_dtype)
        for w_dtype in (x_dtype, torch.float32):
            w = (torch.rand(h, device="cuda", generator=gen) + 0.5).to(w_dtype)
            for residual in (None, u):
                for cast in (False, True):
                    for zc in (False, True):
                        key = (f"{shape} x={x_dtype} w={w_dtype} residual={residual is not None}"
                               f" cast={cast} zc={zc}")
                        outs = rmsnorm_forward(x, w, residual=residual, cast_before_weight_mul=cast,
                                               zero_centered_gamma=zc, **FP)
                        results[key] = [o.clone().cpu() for o in outs]
if mode == "save":
    torch.save(results, path)
    print(f"saved {len(results)} cases")
    sys.exit(0)
saved = torch.load(path)


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a.view(torch.uint8), b.view(torch.uint8))


bad = [k for k, v in results.items()
       if len(v) != len(saved[k]) or not all(map(same, v, saved[k]))]
for k in bad[:10]:
    print("DIFFER", k)
print(f"{len(results) - len(bad)} of {len(results)} cases bit-identical")
sys.exit(1 if bad else 0)
