"""Session 31 probe: which L2 flush leaves the same cold state whatever ran before.

cold_seq2.py found two states: in a fresh process a cold call (after a 256 MB fill) costs ours
and Liger ~0.5 us more than warm; after a sequence with torch.compile's kernel between the
fills, cold calls cost only ~0.1 us more than warm, for every candidate, and stay so. The
guess: the L2 learned to insert the fill's streaming lines where they evict each other, so the
call's inputs, read every iteration, survive a fill of any size. Here each flush is timed on
ours and Liger (CUPTI, median of 30 [flush, call]) in a fresh process (phase A), then after
cold_seq2.py's priming sequence (phase B):
  fill      flush.fill_(1.0), 256 MB (the probes' flush)
  zero      zero_() of a 256 MiB uint8 buffer (the harness's L2Flusher)
  fillsum   fill, then a read (sum) of the same 256 MB
  l2twice   two fills of a buffer of the L2's size (the second pass hits, so the flush's lines
            are the recently used ones)
  l2x4      four fills of a buffer of the L2's size
and warm (no flush) for reference.
"""
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case

DEV = torch.device("cuda")
L2 = torch.cuda.get_device_properties(DEV).L2_cache_size
big = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
zero_buf = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=DEV)
l2buf = torch.empty(L2 // 4, dtype=torch.float32, device=DEV)
FLUSHES = {
    "warm": [],
    "fill": [lambda: big.fill_(1.0)],
    "zero": [lambda: zero_buf.zero_()],
    "fillsum": [lambda: big.fill_(1.0), lambda: big.sum()],
    "l2twice": [lambda: l2buf.fill_(1.0)] * 2,
    "l2x4": [lambda: l2buf.fill_(1.0)] * 4,
}
CALLS = 30
TAGS = {"ours": "miles_rmsnorm", "liger": "_rms_norm", "compile": "triton_"}


def timed(seq, tag):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            for f in seq:
                f()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and tag in e.name]
    return statistics.median(times) if times else float("nan")


cands = {c.key.split("[")[0]: c for c in build_candidates(list(TAGS), ["first_party"])
         if c.availability(DEV) is None}
cases = [plain_case(64, 2048), plain_case(64, 8192), plain_case(256, 4096)]
sets = {case.key: make_input_sets(case, DEV, 0, 1) for case in cases}


def calls_of(case, keys):
    out = {}
    for key in keys:
        cands[key].setup(case, sets[case.key])
        out[key] = lambda c=cands[key], s=sets[case.key]: c.forward(s[0], grad=False)
        for _ in range(5):
            out[key]()
    torch.cuda.synchronize()
    return out


def phase(label):
    print(f"phase {label} (L2 {L2 >> 20} MiB)\n{'case':24s} {'cand':6s} "
          + " ".join(f"{f:>8s}" for f in FLUSHES), flush=True)
    for case in cases:
        fns = calls_of(case, ["ours", "liger"])
        for key, fn in fns.items():
            row = [timed(flush + [fn], TAGS[key]) for flush in FLUSHES.values()]
            print(f"{case.key:24s} {key:6s} " + " ".join(f"{t:8.2f}" for t in row), flush=True)


phase("A: fresh process")
for case in cases[:1]:
    fns = calls_of(case, ["ours", "compile", "liger"])
    seq = []
    for fn in fns.values():
        seq += [lambda: big.fill_(1.0), fn]
    for tag in TAGS.values():
        timed(seq, tag)
phase("B: after the priming sequence")
