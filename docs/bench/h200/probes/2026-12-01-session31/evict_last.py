"""Session 31 probe: do loads with an L2 evict_last hint keep a call's inputs in L2 through the
harness's flush, and does resetting the persisting lines undo it?

cold_seq2.py / cold_flush.py: cold calls (after a 256 MB fill) got ~0.5 us faster for every
candidate, and stayed so, once torch.compile's kernel had run on the same inputs between the
fills. Its kernel for the FP32 formula is a looped reduction (`triton_red_...`), which loads x
twice and marks loads evict_last. Here a Triton kernel reads x (one 64 x 2048 BF16 case) with
eviction_policy evict_normal, evict_first or evict_last, once, then ours is timed cold (CUPTI,
median of 30 [fill, call]); cuCtxResetPersistingL2Cache (driver API) is tried as the undo. Then
each candidate cold with the reset before every fill ([reset, fill, call] x 30), ours, Liger and
torch.compile, against the plain [fill, call] x 30.
"""
import ctypes
import statistics

import torch
import triton
import triton.language as tl
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case

DEV = torch.device("cuda")
big = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CALLS = 30
TAGS = {"ours": "miles_rmsnorm", "liger": "_rms_norm", "compile": "triton_red"}
libcuda = ctypes.CDLL("libcuda.so.1")


def reset():
    rc = libcuda.cuCtxResetPersistingL2Cache()
    if rc != 0:
        raise RuntimeError(f"cuCtxResetPersistingL2Cache: {rc}")


@triton.jit
def read_kernel(x_ptr, out_ptr, n, POLICY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if POLICY == 0:
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    elif POLICY == 1:
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0, eviction_policy="evict_first")
    else:
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0, eviction_policy="evict_last")
    tl.atomic_add(out_ptr, tl.sum(v.to(tl.float32), axis=0))


def read(t, policy):
    out = torch.zeros(1, device=DEV)
    flat = t.reshape(-1)
    read_kernel[(triton.cdiv(flat.numel(), 1024),)](flat, out, flat.numel(), POLICY=policy,
                                                    BLOCK=1024)
    torch.cuda.synchronize()


def timed(seq, tag):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            for f in seq:
                f()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and tag in e.name]
    return statistics.median(times) if times else float("nan")


def fill():
    big.fill_(1.0)


cands = {c.key.split("[")[0]: c for c in build_candidates(list(TAGS), ["first_party"])
         if c.availability(DEV) is None}
case = plain_case(64, 2048)
sets = make_input_sets(case, DEV, 0, 1)
inp = sets[0]
fns = {}
for key, cand in cands.items():
    cand.setup(case, sets)
    fns[key] = lambda c=cand: c.forward(inp, grad=False)
ours = fns.pop("ours")
for _ in range(5):
    ours()
torch.cuda.synchronize()
steps = [
    ("fresh", lambda: None),
    ("read normal", lambda: read(inp.x, 0)),
    ("read first", lambda: read(inp.x, 1)),
    ("read last", lambda: read(inp.x, 2)),
    ("reset", reset),
    ("read last, w too", lambda: (read(inp.x, 2), read(inp.w, 2))),
    ("read normal after", lambda: read(inp.x, 0)),
    ("read first after", lambda: read(inp.x, 1)),
    ("reset", reset),
]
print(f"ours {case.key} cold (us) after each step, in order")
for label, step in steps:
    step()
    torch.cuda.synchronize()
    print(f"  {label:20s} {timed([fill, ours], TAGS['ours']):6.2f}", flush=True)

print(f"\n{'candidate':10s} {'[fill, call]':>13s} {'[reset, fill, call]':>20s}  (after warm-up calls)")
fns = {"ours": ours, **fns}
for key, fn in fns.items():
    for _ in range(5):
        fn()
    reset()
    torch.cuda.synchronize()
    plain = timed([fill, fn], TAGS[key])
    with_reset = timed([reset, fill, fn], TAGS[key])
    print(f"{key:10s} {plain:13.2f} {with_reset:20.2f}", flush=True)
for key, fn in fns.items():
    reset()
    print(f"{key:10s} again   {timed([fill, fn], TAGS[key]):6.2f} "
          f"{timed([reset, fill, fn], TAGS[key]):6.2f}", flush=True)
