"""Session 31 probe: which of a cold forward call's inputs costs ours its extra cold time.

CUPTI kernel durations of one forward call (median of 30), ours and Liger, after a 256 MB fill
and then a read of some of the call's inputs (a torch.sum over them, not timed): none (cold), x,
the weights w, both; and warm (no fill). Only the call's own kernels are summed. Also writes
Liger's compiled forward (PTX and cubin, H = 2048 and 8192) to $OUT for a look at its loads.
"""
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CASES = [plain_case(64, 2048), plain_case(64, 8192), plain_case(256, 4096)]
CALLS = 30
MODES = ("warm", "cold", "x", "w", "xw")


def run_mode(mode, fn, inp, per_call):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            if mode != "warm":
                flush.fill_(1.0)
            if "x" in mode:
                inp.x.sum()
            if mode in ("w", "xw"):
                inp.w.sum()
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "fill" not in e.name.lower()]
    each = len(kernels) // CALLS
    return statistics.median(
        sum(k.device_time for k in kernels[i * each + each - per_call:(i + 1) * each])
        for i in range(CALLS)), each


cands = build_candidates(["ours", "liger"], ["first_party"])
for cand in cands:
    cand.availability(DEV)
print(f"{'case':24s} {'candidate':12s} " + " ".join(f"{m:>7s}" for m in MODES))
for case in CASES:
    sets = make_input_sets(case, DEV, 0, 1)
    for cand in cands:
        cand.setup(case, sets)
        fn = lambda: cand.forward(sets[0], grad=False)  # noqa: E731
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        per_call = len([e for e in prof.events()
                        if e.device_type == torch.autograd.DeviceType.CUDA])
        row = [run_mode(m, fn, sets[0], per_call)[0] for m in MODES]
        print(f"{case.key:24s} {cand.key:12s} " + " ".join(f"{t:7.2f}" for t in row), flush=True)
        cand.teardown()

out = os.environ.get("OUT")
if out:
    from liger_kernel.ops.rms_norm import _rms_norm_forward_kernel
    from liger_kernel.ops.utils import calculate_settings
    for hidden in (2048, 8192):
        x = torch.randn(64, hidden, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(hidden, device=DEV, dtype=torch.bfloat16)
        y = torch.empty_like(x)
        r = torch.empty(64, device=DEV, dtype=torch.float32)
        block, warps = calculate_settings(hidden)
        k = _rms_norm_forward_kernel[(64,)](y, y.stride(0), x, x.stride(0), w, w.stride(0), r,
                                           r.stride(0), hidden, 1e-6, 0.0, 0,
                                           elementwise_affine=True, BLOCK_SIZE=block,
                                           num_warps=warps)
        for name in ("ptx", "cubin"):
            data = k.asm[name]
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(f"{out}/liger_fwd_{hidden}.{name}", mode) as f:
                f.write(data)
        print(f"liger {hidden}: {warps} warps, {k.n_regs} registers")
