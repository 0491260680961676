"""Session 26: what a backward's own workspace costs a CUDA graph captured on a stream with no
cached workspace (its zero fill is a node of the graph) against one captured after a warm-up on
its stream (the cached buffer). Median replay time of a graph of 20 backward calls, us a call."""
import statistics

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward, rmsnorm_workspace_bytes

DEV = torch.device("cuda")
CALLS = 20
print(f"{'rows x hidden':>14s} {'workspace KB':>13s} {'warm stream':>12s} {'cold stream':>12s}")
for rows, hidden in [(64, 4096), (4096, 2048), (4096, 4096), (16384, 8192)]:
    x = torch.randn(rows, hidden, device=DEV).bfloat16()
    g = torch.randn_like(x)
    w = torch.ones(hidden, device=DEV, dtype=torch.bfloat16)
    _, rstd = rmsnorm_forward(x, w)
    rmsnorm_backward(g, x, w, rstd)
    times = {}
    for mode in ("warm", "cold"):
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            if mode == "warm":
                rmsnorm_backward(g, x, w, rstd)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                outs = [rmsnorm_backward(g, x, w, rstd) for _ in range(CALLS)]
            samples = []
            for _ in range(30):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(True)
                start.record()
                graph.replay()
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) * 1000 / CALLS)
        torch.cuda.current_stream().wait_stream(stream)
        times[mode] = statistics.median(samples)
        del outs, graph
    kb = rmsnorm_workspace_bytes(hidden, DEV) / 1024
    print(f"{rows:>6d} x {hidden:<5d} {kb:13.0f} {times['warm']:12.2f} {times['cold']:12.2f}")
