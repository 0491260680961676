"""Graph-replay cold time of ours and Liger at 256 x 4096 under the harness's choices (256 MiB
flush, three input sets rotated) and the session-20 probe's (512 MiB, one set)."""
import statistics, torch
from miles_ext_kernels.cake import rmsnorm_forward
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
EPS = 1e-6
dev = torch.device("cuda")

def replay_us(fn, flush, n=24, reps=15):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3): fn(i)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for i in range(n):
                flush.zero_(); fn(i)
        gf = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gf, stream=s):
            for i in range(n):
                flush.zero_()
    torch.cuda.current_stream().wait_stream(s)
    def t(graph):
        out = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); graph.replay(); b.record(); b.synchronize(); out.append(a.elapsed_time(b) * 1e3 / n)
        return statistics.median(out)
    t(g); t(gf)
    vals = []
    for _ in range(3):
        vals.append(t(g) - t(gf))
    return statistics.median(vals)

for T, H in [(256, 4096), (1024, 2048)]:
    xs = [torch.randn(T, H, device=dev).to(torch.bfloat16) for _ in range(3)]
    w = (torch.rand(H, device=dev) + 0.5).to(torch.bfloat16)
    for mib in (256, 512):
        flush = torch.empty(mib << 20, dtype=torch.uint8, device=dev)
        for sets in (1, 3):
            row = []
            for name, call in (("ours", lambda x: rmsnorm_forward(x, w, EPS, backend="first_party", strict=True)),
                               ("liger", lambda x: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "gemma", True))):
                row.append(f"{name} {replay_us(lambda i: call(xs[i % sets]), flush):.2f}")
            print(f"{T}x{H} flush {mib} MiB, {sets} set(s): " + "  ".join(row))
        del flush
