"""Session 31 probe: what turns the slow cold state into the fast one.

cold_inter.py (ours, torch.compile and Liger interleaved) measured cold calls ~0.5 us faster
than cold_seq.py (ours and Liger only) for both. CUPTI durations (median of 30) of ours and
Liger cold ([fill, call] x 30) at 64 x 2048 and 256 x 4096:
  before    before torch.compile has been set up in this process;
  after     after the torch.compile candidate's setup and five calls (its kernels not run in
            the timed sequence);
  with      [fill, ours, fill, compile, fill, liger] x 30 (cold_inter's sequence);
  touch     [fill, a read of one element of each 64 KB of x, call] (translations of x's pages
            warmed, its data almost all cold).
"""
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.rmsnorm.candidates import build_candidates
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import plain_case

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
CALLS = 30
TAGS = {"ours": "miles_rmsnorm", "liger": "_rms_norm", "compile": "triton_"}


def fill():
    flush.fill_(1.0)


def timed(seq, tags):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            for f in seq:
                f()
        torch.cuda.synchronize()
    out = []
    for tag in tags:
        times = [e.device_time for e in prof.events()
                 if e.device_type == torch.autograd.DeviceType.CUDA and tag in e.name]
        out.append(statistics.median(times) if times else float("nan"))
    return out


cands = {c.key.split("[")[0]: c for c in build_candidates(list(TAGS), ["first_party"])
         if c.availability(DEV) is None}
cases = [plain_case(64, 2048), plain_case(256, 4096)]
sets = {case.key: make_input_sets(case, DEV, 0, 1) for case in cases}


def fns(case, keys):
    out = []
    for key in keys:
        cands[key].setup(case, sets[case.key])
        out.append(lambda c=cands[key], s=sets[case.key]: c.forward(s[0], grad=False))
    for f in out:
        for _ in range(5):
            f()
    torch.cuda.synchronize()
    return out


def report(label, case, keys, times):
    print(f"{case.key:24s} {label:8s} " + " ".join(f"{k}={t:.2f}" for k, t in zip(keys, times)),
          flush=True)


for case in cases:
    o, lg = fns(case, ["ours", "liger"])
    report("before", case, ["ours", "liger"],
           timed([fill, o], ["miles"]) + timed([fill, lg], ["_rms_norm"]))
for case in cases:
    o, lg, c = fns(case, ["ours", "liger", "compile"])
    report("after", case, ["ours", "liger"],
           timed([fill, o], ["miles"]) + timed([fill, lg], ["_rms_norm"]))
    report("with", case, ["ours", "compile", "liger"],
           timed([fill, o, fill, c, fill, lg], ["miles", "triton_", "_rms_norm"]))
    x = sets[case.key][0].x
    touch = lambda: x.view(-1)[::32768].sum()  # noqa: E731
    report("touch", case, ["ours", "liger"],
           timed([fill, touch, o], ["miles"]) + timed([fill, touch, lg], ["_rms_norm"]))
    report("again", case, ["ours", "liger"],
           timed([fill, o], ["miles"]) + timed([fill, lg], ["_rms_norm"]))
