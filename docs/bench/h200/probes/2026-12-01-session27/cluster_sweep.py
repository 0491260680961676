"""Session 27: the small-batch backward in 16-CTA clusters (the launcher's choice where the
driver places them) against 8-CTA ones (MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS=0), each with the
launcher's dw and with the re-read forced. Median replay time of a CUDA graph of 20 backward
calls (warm L2), us a call, the graphs replayed in turn."""
import os
import statistics

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward
from miles_ext_kernels.kernels.rmsnorm import spec

DEV = torch.device("cuda")
CALLS = 20
ROWS = [int(v) for v in os.environ.get("ROWS", "16,32,64,96,128,256").split(",")]
HIDDEN = [int(v) for v in os.environ.get("HIDDEN", "2560,3072,4096,8192").split(",")]
MODES = {"16": {}, "16 reread": {"MILES_EXT_KERNELS_SMALL_DW": "reread"},
         "8": {"MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS": "0"},
         "8 reread": {"MILES_EXT_KERNELS_NONPORTABLE_CLUSTERS": "0",
                      "MILES_EXT_KERNELS_SMALL_DW": "reread"}}


def graph_of(call, env):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(CALLS):
                call()
    torch.cuda.current_stream().wait_stream(stream)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    return graph


def replay_us(graph) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / CALLS


print(f"{'rows':>5s} {'hidden':>6s} {'clusters':>8s} " + " ".join(f"{m:>9s}" for m in MODES))
for rows in ROWS:
    for hidden in HIDDEN:
        if rows > spec.small_backward_window(hidden)[1]:
            continue
        s = spec.small_backward_shape(rows, hidden)
        x = torch.randn(rows, hidden, device=DEV).bfloat16()
        g = torch.randn_like(x)
        w = torch.rand(hidden, device=DEV).bfloat16()
        _, rstd = rmsnorm_forward(x, w)
        dx = torch.empty_like(x)
        dw = torch.empty(hidden, device=DEV)

        def call():
            rmsnorm_backward(g, x, w, rstd, dx=dx, dw=dw)

        graphs = {m: graph_of(call, env) for m, env in MODES.items()}
        samples = {m: [] for m in graphs}
        for _ in range(40):
            for m, graph in graphs.items():
                samples[m].append(replay_us(graph))
        t = {m: statistics.median(v) for m, v in samples.items()}
        print(f"{rows:5d} {hidden:6d} {s['clusters']:8d} " + " ".join(f"{t[m]:9.2f}" for m in MODES))
