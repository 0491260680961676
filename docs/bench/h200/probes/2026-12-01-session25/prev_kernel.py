"""Session 25 probe: does the kernel that runs before ours change how long ours takes?

Hypothesis: the small-batch backward needs ~33 KB of static shared memory; after the harness's
L2 flush (an elementwise kernel with none) an SM may have to change its L1 / shared-memory split
before our CTA starts, which torch.compile's and Liger's kernels (little shared memory) do not
pay. Each graph is [flush] + [before] + [op]; the op's cost is its graph's median minus the same
graph without it, with `before` nothing, a tiny elementwise kernel (no shared memory) or a bf16
matmul (cuBLAS: a kernel with a large shared-memory footprint). Rounds interleave the graphs.
"""
import statistics

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_forward

DEV = torch.device("cuda")
flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)
tiny = torch.zeros(1024, device=DEV)
a = torch.randn(512, 512, device=DEV, dtype=torch.bfloat16)
b = torch.randn(512, 512, device=DEV, dtype=torch.bfloat16)
c = torch.empty(512, 512, device=DEV, dtype=torch.bfloat16)
BEFORE = {"none": lambda: None, "elementwise": lambda: tiny.add_(1.0),
          "matmul": lambda: torch.matmul(a, b, out=c)}


def make_op(kind, rows, hidden):
    torch.manual_seed(rows + hidden)
    x = torch.randn(rows, hidden, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(hidden, device=DEV, dtype=torch.bfloat16)
    g = torch.randn(rows, hidden, device=DEV, dtype=torch.bfloat16)
    _, rstd = rmsnorm_forward(x, w, 1e-6, backend="first_party", strict=True)
    if kind == "fwd":
        return lambda: rmsnorm_forward(x, w, 1e-6, backend="first_party", strict=True)
    return lambda: rmsnorm_backward(g, x, w, rstd, backend="first_party", strict=True)


def graph_of(*fns):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            for fn in fns:
                fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in fns:
            fn()
    return graph


def median_us(graph, n=120):
    times = []
    for _ in range(n):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


ops = [("bwd", 1, 256), ("bwd", 1, 2048), ("bwd", 64, 4096), ("bwd", 64, 8192),
       ("fwd", 1, 256), ("fwd", 1, 4096)]
fill = lambda: flush.fill_(1.0)  # noqa: E731
# The closures hold each op's inputs: a graph does not keep the tensors it reads alive (freed
# inputs were the first run's illegal address, after torch.cuda.graph's empty_cache).
calls = {op: make_op(*op) for op in ops}
graphs = {}
for name, before in BEFORE.items():
    graphs[(name, None)] = graph_of(fill, before)
    for op in ops:
        graphs[(name, op)] = graph_of(fill, before, calls[op])
samples = {key: [] for key in graphs}
for _ in range(5):
    for key, graph in graphs.items():
        samples[key].append(median_us(graph))
base = {name: statistics.median(samples[(name, None)]) for name in BEFORE}
print("graph without the op (us): " + ", ".join(f"{k} {v:.2f}" for k, v in base.items()))
print(f"{'op':18s}" + "".join(f"{name:>14s}" for name in BEFORE))
for op in ops:
    cells = "".join(f"{statistics.median(samples[(name, op)]) - base[name]:14.2f}"
                    for name in BEFORE)
    print(f"{op[0]} {op[1]:>3d} x {op[2]:<6d}  {cells}")
