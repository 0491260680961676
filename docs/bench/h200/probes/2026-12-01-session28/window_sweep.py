"""Session 28, call 6: the backward past the small-batch windows. Run once from the repository
(the package's windows: the main program past them) and once from a copy whose SMALL_WINDOWS are
widened (the small-batch program, so the row and column CTAs, there too). Per shape: the kernels
a call launches (their names' program), their CUPTI time after a 256 MB fill (cold, median of 30
calls' sums), and the median replay of a CUDA graph of 20 calls (warm), us. BF16. The last
shapes are the harness's strided per-head view, [T, 24 of 32, 256]."""
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
SHAPES = ([(r, 256) for r in (256, 384, 512, 768, 1024, 1536, 2048, 3072)]
          + [(r, 512) for r in (384, 512, 768, 1024, 1536, 2048)]
          + [(r, h) for h in (1024, 2048, 4096) for r in (256, 384, 512, 768, 1024)]
          + [(r, h) for h in (5120, 6144) for r in (128, 192, 256, 384, 512)]
          + [(r, 8192) for r in (256, 384, 512)])
if os.environ.get("SHAPES"):  # "rows:hidden,...": these shapes instead (session 29)
    SHAPES = [tuple(map(int, item.split(":"))) for item in os.environ["SHAPES"].split(",")]


def cold_us(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(30):
            flush.fill_(1.0)
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    calls, current = [], None
    for e in events:
        if "elementwise" in e.name or "fill" in e.name.lower():
            if current is not None:
                calls.append(current)
            current = [0.0, []]
        elif current is not None:
            current[0] += e.device_time
            current[1].append(e.name)
    calls.append(current)
    names = sorted({n.split("<")[0].split("(")[0].split("::")[-1] for n in calls[-1][1]})
    return statistics.median(c[0] for c in calls), names


def graph_us(fn):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(20):
                fn()
    torch.cuda.current_stream().wait_stream(stream)
    samples = []
    for _ in range(30):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000 / 20)
    return statistics.median(samples)


def measure(label, g, x, w, rstd):
    fn = lambda: rmsnorm_backward(g, x, w, rstd)  # noqa: E731
    cold, names = cold_us(fn)
    warm = graph_us(fn)
    print(f"{label:>22s} {cold:8.2f} {warm:8.2f}  {','.join(names)}", flush=True)


print(f"{'rows x hidden':>22s} {'cold':>8s} {'warm':>8s}  kernels")
for rows, hidden in SHAPES:
    x = torch.randn(rows, hidden, device=DEV).bfloat16()
    g = torch.randn_like(x)
    w = torch.rand(hidden, device=DEV).bfloat16()
    _, rstd = rmsnorm_forward(x, w)
    measure(f"{rows} x {hidden}", g, x, w, rstd)
for tokens in (16, 64):
    buf = torch.randn(tokens, 32, 256, device=DEV).bfloat16()
    gbuf = torch.randn_like(buf)
    x, g = buf[:, :24], gbuf[:, :24]
    w = torch.rand(256, device=DEV).bfloat16()
    _, rstd = rmsnorm_forward(x.contiguous(), w)
    measure(f"[{tokens},24 of 32,256]", g, x, w, rstd)
