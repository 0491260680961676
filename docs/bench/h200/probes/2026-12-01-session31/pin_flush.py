"""Session 31 probe: a capturable flush that also evicts the lines a kernel pinned (evict_last).

evict_last.py: torch.compile's forward, timed as [256 MB fill, call] x 30, took 1.63 us at 64 x
2048 but 2.10 with cuCtxResetPersistingL2Cache before each fill (its loads pin its inputs in L2,
so the fill does not evict them); ours and Liger were level either way. The reset is a host call
and cannot go into the harness's CUDA graphs. Candidate flushes, each timed on ours, Liger and
torch.compile (CUPTI, median of 30 [flush, call], eager):
  fill      the 256 MB fill (the probes' flush; the harness's is a zero_ of 256 MiB)
  reset     cuCtxResetPersistingL2Cache, then the fill (the reference: nothing stays pinned)
  last      a 256 MB fill whose stores carry evict_last (Triton), so that the flush's lines
            outrank or match the pinned ones
  last+fill the evict_last fill, then the plain fill over the same buffer
Also each flush in a CUDA graph of 30 [flush, call] for torch.compile (the harness's form).
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


@triton.jit
def pinned_fill_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n,
             eviction_policy="evict_last")


def pinned_fill():
    pinned_fill_kernel[(triton.cdiv(big.numel(), 4096),)](big, big.numel(), BLOCK=4096)


def fill():
    big.fill_(1.0)


def reset():
    libcuda.cuCtxResetPersistingL2Cache()


FLUSHES = {"fill": [fill], "reset": [reset, fill], "last": [pinned_fill],
           "last+fill": [pinned_fill, fill]}


def timed(seq, tag, graph=False):
    if graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for f in seq:
                f()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        keep = []
        with torch.cuda.graph(g):
            for _ in range(CALLS):
                for f in seq:
                    keep.append(f())
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        if graph:
            g.replay()
        else:
            for _ in range(CALLS):
                for f in seq:
                    f()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and tag in e.name]
    return statistics.median(times) if times else float("nan")


cands = {c.key.split("[")[0]: c for c in build_candidates(list(TAGS), ["first_party"])
         if c.availability(DEV) is None}
print(f"{'case':24s} {'candidate':8s} " + " ".join(f"{f:>10s}" for f in FLUSHES)
      + "  graph: " + " ".join(f"{f:>10s}" for f in FLUSHES if f != "reset"))
for case in (plain_case(64, 2048), plain_case(256, 4096), plain_case(64, 8192)):
    sets = make_input_sets(case, DEV, 0, 1)
    for key, cand in cands.items():
        cand.setup(case, sets)
        fn = lambda c=cand: c.forward(sets[0], grad=False)  # noqa: E731
        for _ in range(5):
            fn()
        row = [timed(flush + [fn], TAGS[key]) for flush in FLUSHES.values()]
        graphs = [timed(flush + [fn], TAGS[key], graph=True) if key == "compile"
                  else float("nan") for name, flush in FLUSHES.items() if name != "reset"]
        print(f"{case.key:24s} {key:8s} " + " ".join(f"{t:10.2f}" for t in row) + "         "
              + " ".join(f"{t:10.2f}" for t in graphs), flush=True)
        cand.teardown()
