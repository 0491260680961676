"""Cold-L2 penalty of a forward call split by what is cold: ours, Liger and a plain copy of the same
bytes (y.copy_(x)); CUPTI kernel durations, flush = 512 MB zero_, then optionally x or w touched."""
import statistics, torch
from torch.profiler import profile, ProfilerActivity
from miles_ext_kernels.cake import rmsnorm_forward
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
EPS = 1e-6
dev = torch.device("cuda")
flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
sink = torch.empty(1, device=dev)

def kernel_time(fn, pre, n=80):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            pre()
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA: continue
        per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return per

rows = []
for T, H in [(1, 2048), (128, 2048), (256, 4096), (256, 8192)]:
    g = torch.Generator(device=dev).manual_seed(T + H)
    x = torch.randn(T, H, device=dev, generator=g).to(torch.bfloat16)
    w = (torch.rand(H, device=dev, generator=g) + 0.5).to(torch.bfloat16)
    y = torch.empty_like(x)
    cands = {
        "ours": (lambda: rmsnorm_forward(x, w, EPS, backend="first_party", strict=True), "miles"),
        "liger": (lambda: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "gemma", True), "rms_norm"),
        "copy": (lambda: y.copy_(x), "copy"),
    }
    pres = {
        "warm": lambda: None,
        "cold": lambda: flush.zero_(),
        "cold,x warm": lambda: (flush.zero_(), sink.copy_(x.view(-1)[:1].float().sum() + x.float().sum())),
        "cold,w warm": lambda: (flush.zero_(), sink.copy_(w.float().sum())),
    }
    for name, (fn, key) in cands.items():
        out = []
        for mode, pre in pres.items():
            per = kernel_time(fn, pre)
            ks = [k for k in per if key.lower() in k.lower() or (key == "copy" and ("copy" in k.lower() or "elementwise" in k.lower()))]
            out.append(sum(statistics.median(per[k]) for k in ks) if ks else float("nan"))
        rows.append((f"{T}x{H}", name, out))
print(f"{'shape':10s} {'cand':6s} {'warm':>6s} {'cold':>6s} {'x warm':>7s} {'w warm':>7s}")
for s, n, o in rows:
    print(f"{s:10s} {n:6s} " + " ".join(f"{v:6.2f}" for v in o))
