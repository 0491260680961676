"""Session 28: the small-batch backward's cluster kernel (MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD=0)
against the row and column CTAs (=1) over rows x hidden. Per mode: the kernel's CUPTI duration
(torch.profiler), each call after a 256 MB fill (cold L2), median of 30; and the median replay of
a CUDA graph of 20 calls (warm L2), us a call. BF16 rows and weights, no residual."""
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward
from miles_ext_kernels.kernels.rmsnorm import spec

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
ROWS = [int(v) for v in os.environ.get("ROWS", "2,4,8,16,32,48,64,96,128,192,256").split(",")]
HIDDEN = [int(v) for v in os.environ.get(
    "HIDDEN", "256,512,1024,2048,3072,4096,5120,6144,8192").split(",")]
MODES = {"cluster": "0", "rowcol": "1"}
KEY = "MILES_EXT_KERNELS_ROW_COLUMN_BACKWARD"


def cold_us(fn) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(30):
            flush.fill_(1.0)
            fn()
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and "backward_" in e.name]
    return statistics.median(times)


def graph_us(fn) -> float:
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


print(f"{'rows':>5s} {'hidden':>6s} {'cl':>3s} {'rpg':>3s}  cold: cluster rowcol ratio"
      "   warm: cluster rowcol ratio")
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
        ref = None
        cold, warm = {}, {}
        for mode, value in MODES.items():
            os.environ[KEY] = value
            call = lambda: rmsnorm_backward(g, x, w, rstd, dx=dx, dw=dw)  # noqa: E731
            call()
            torch.cuda.synchronize()
            bits = (dx.view(torch.int16).clone(), dw.view(torch.int32).clone())
            if ref is None:
                ref = bits
            elif not (torch.equal(ref[0], bits[0]) and torch.equal(ref[1], bits[1])):
                print(f"BITS DIFFER {rows} x {hidden}")
            cold[mode] = cold_us(call)
            warm[mode] = graph_us(call)
        os.environ.pop(KEY)
        print(f"{rows:5d} {hidden:6d} {s['clusters']:3d} {s['rows_per_group']:3d}  "
              f"      {cold['cluster']:7.2f} {cold['rowcol']:6.2f} {cold['rowcol'] / cold['cluster']:5.2f}"
              f"         {warm['cluster']:7.2f} {warm['rowcol']:6.2f} {warm['rowcol'] / warm['cluster']:5.2f}",
              flush=True)
