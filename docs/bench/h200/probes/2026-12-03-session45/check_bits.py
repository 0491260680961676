"""Session 45: the forward's batch invariance on the rows a variant changes: y, rstd and h_new of
the first T rows of a batch of 3000 (the streaming kernels) against the same rows as a batch of T
(the small-batch kernels), plain and residual, BF16 and FP32 weights, every contract. Prints one
line per hidden size; exits 1 on any differing bit.
  python check_bits.py 2048,4096,6144 33,48,64"""
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_forward

FP = {"backend": "first_party", "strict": True}
CONTRACTS = [{}, {"cast_before_weight_mul": True}, {"zero_centered_gamma": True}]
bad = 0
for hidden in map(int, sys.argv[1].split(",")):
    gen = torch.Generator(device="cuda").manual_seed(hidden)
    x = torch.randn(3000, hidden, device="cuda", generator=gen).bfloat16()
    u = torch.randn(3000, hidden, device="cuda", generator=gen).bfloat16()
    cases = 0
    for w_dtype in (torch.bfloat16, torch.float32):
        w = (torch.rand(hidden, device="cuda", generator=gen) + 0.5).to(w_dtype)
        for residual in (None, u):
            for contract in CONTRACTS:
                ref = rmsnorm_forward(x, w, residual=residual, **contract, **FP)
                for t in map(int, sys.argv[2].split(",")):
                    res = None if residual is None else residual[:t]
                    got = rmsnorm_forward(x[:t], w, residual=res, **contract, **FP)
                    cases += 1
                    if not all(torch.equal(a, b[:t]) for a, b in zip(got, ref, strict=True)):
                        bad += 1
                        print("DIFFER", hidden, t, w_dtype, residual is not None, contract)
    print(f"H {hidden}: {cases} cases")
sys.exit(1 if bad else 0)
