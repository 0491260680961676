"""Session 68 (prepared): is torch.compile's lead on the small forward (T 1-16, H 256 and 512:
0.06-0.19 us of kernel time on the H200 and the H100) a cold start's or the warm path's?

Each body runs the forward with grad twice on the same rows after the harness's L2 flush; under
CUPTI each call's kernel is timed apart: the first as the harness times it (rows, weights, code
and kernel parameters cold in L2), the second right behind it (all of them warm). A gap that stays
in the second call is the instruction path's; one that goes is the cold start's (the dependent
memory round trips before the row's loads, the code's fetch).

  python fwd_twice.py 1x256,16x256,1x512,16x512,1x2048 bf16 [residual]

(The family, plain unless named, was added in session 69, and FWD_TWICE_OURS_ONLY=1, which
leaves torch.compile out.)

Prints a markdown table: per shape and candidate, the median duration (us) of the first and the
second kernel after each flush, and the gap between them.
"""
import os
import statistics
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import first_and_second, replay_kernels  # noqa: E402

shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
w_name = sys.argv[2]
family = sys.argv[3] if len(sys.argv) > 3 else "plain"
timer = timing.Timer(torch.device("cuda"))
print(f"| T x H ({family}, {w_name} w) | candidate | first kernel | second kernel | gap | calls |")
print("| --- | --- | --- | --- | --- | --- |")
for t, h in shapes:
    case = Case(family, t, h, w_dtype=w_name)
    sets = make_input_sets(case, timer.device, 0, 2)
    torch._dynamo.reset()
    cands = [("ours", Ours("first_party")), ("compile", CompiledFp32())]
    for label, cand in cands[:1] if os.environ.get("FWD_TWICE_OURS_ONLY") else cands:
        with timer.stream_context():
            cand.availability(timer.device)
            cand.setup(case, sets)
            cand.forward(sets[0], grad=True)

            def body(i, cand=cand, sets=sets):
                cand.forward(sets[i], grad=True)
                cand.forward(sets[i], grad=True)

        timer.synchronize()
        replay, err = timer.build(body, 20, 2)
        if err:
            raise SystemExit(err)
        first, second, gap = first_and_second(replay_kernels(replay))
        med = [round(statistics.median(v), 3) if v else float("nan") for v in (first, second, gap)]
        print(f"| {t} x {h} | {label} | {med[0]} | {med[1]} | {med[2]} | {len(first)} |",
              flush=True)
        cand.teardown()
