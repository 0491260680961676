"""Session 27: the re-read dw (kDwReread) against the fold through the workspace
(MILES_EXT_KERNELS_SMALL_DW=fold) over the small-batch backward's multi-cluster shapes the harness
has no rows for (call 3 ran it with an earlier knob, _SMALL_DW_FOLD=1, the re-read the default at
batches of one and two rows). Median replay time of a CUDA graph of 20 backward calls (warm L2: the
same inputs call after call), us a call, the two modes' graphs replayed in turn. Prints the
shape's clusters, CTAs a cluster, row groups and rows a group; since call 7 also the launcher's
choice ("launcher": 8-CTA clusters and the re-read for one-warp slices over 9-16 CTAs).
Both forced modes run the 16-CTA shape where the driver places it."""
import os
import statistics

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward
from miles_ext_kernels.kernels.rmsnorm import spec

DEV = torch.device("cuda")
CALLS = 20
ROWS = [int(v) for v in os.environ.get("ROWS", "24,40,48,64,96,128").split(",")]
HIDDEN = [int(v) for v in os.environ.get(
    "HIDDEN", "256,512,1024,2048,2560,3072,3584,4096,4608,5120,6144,8192").split(",")]


def graph_of(call, mode: str):
    if mode != "launcher":
        os.environ["MILES_EXT_KERNELS_SMALL_DW"] = mode
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(CALLS):
                call()
    torch.cuda.current_stream().wait_stream(stream)
    os.environ.pop("MILES_EXT_KERNELS_SMALL_DW", None)
    return graph


def replay_us(graph) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / CALLS


print(f"{'rows':>5s} {'hidden':>6s} {'shape':>14s} {'fold':>7s} {'reread':>7s} {'ratio':>6s}"
      f" {'launcher':>8s}")
for rows in ROWS:
    for hidden in HIDDEN:
        if rows > spec.small_backward_window(hidden)[1]:
            continue
        s = spec.small_backward_shape(rows, hidden)
        if s["clusters"] < 2:
            continue
        x = torch.randn(rows, hidden, device=DEV).bfloat16()
        g = torch.randn_like(x)
        w = torch.rand(hidden, device=DEV).bfloat16()
        _, rstd = rmsnorm_forward(x, w)
        dx = torch.empty_like(x)
        dw = torch.empty(hidden, device=DEV)

        def call():
            rmsnorm_backward(g, x, w, rstd, dx=dx, dw=dw)

        graphs = {mode: graph_of(call, mode) for mode in ("fold", "reread", "launcher")}
        samples = {mode: [] for mode in graphs}
        for _ in range(40):
            for mode, graph in graphs.items():
                samples[mode].append(replay_us(graph))
        t = {mode: statistics.median(v) for mode, v in samples.items()}
        shape = f"{s['clusters']}x{s['ctas']} {s['row_groups']}g{s['rows_per_group']}"
        print(f"{rows:5d} {hidden:6d} {shape:>14s} {t['fold']:7.2f} {t['reread']:7.2f} "
              f"{t['reread'] / t['fold']:6.3f} {t['launcher']:8.2f}")
