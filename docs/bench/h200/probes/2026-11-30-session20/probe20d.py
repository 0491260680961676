"""What a captured forward call holds (graph nodes, dumped as DOT) and its graph-replay time, cold
and warm, for ours and Liger at 256 x 4096 and 1 x 2048 (the harness's timing method)."""
import os, statistics, torch
from miles_ext_kernels.cake import rmsnorm_forward
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
EPS = 1e-6
dev = torch.device("cuda")
OUT = os.environ["OUT"]
flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)

def replay_us(fn, cold, n=20, reps=15, dump=None):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(); fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        if dump: g.enable_debug_mode()
        with torch.cuda.graph(g, stream=s):
            for _ in range(n):
                if cold: flush.zero_()
                fn()
        if dump: g.debug_dump(dump)
        gf = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gf, stream=s):
            for _ in range(n):
                if cold: flush.zero_()
    torch.cuda.current_stream().wait_stream(s)
    def t(graph):
        out = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); graph.replay(); b.record(); b.synchronize(); out.append(a.elapsed_time(b) * 1e3 / n)
        return statistics.median(out)
    t(g); t(gf)
    return t(g) - (t(gf) if cold else 0.0)

for T, H in [(256, 4096), (1, 2048)]:
    x = torch.randn(T, H, device=dev).to(torch.bfloat16)
    w = (torch.rand(H, device=dev) + 0.5).to(torch.bfloat16)
    for name, fn in {"ours": lambda: rmsnorm_forward(x, w, EPS, backend="first_party", strict=True),
                     "liger": lambda: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "gemma", True)}.items():
        dump = os.path.join(OUT, f"graph_{name}_{T}x{H}.dot")
        warm = replay_us(fn, False, n=2, reps=3, dump=dump)
        res = [(replay_us(fn, False), replay_us(fn, True)) for _ in range(3)]
        print(f"{T}x{H} {name:6s} warm {statistics.median(r[0] for r in res):.2f} cold {statistics.median(r[1] for r in res):.2f}")
