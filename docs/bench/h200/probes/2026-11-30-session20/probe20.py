"""CUPTI kernel durations (cold L2) of ours, Liger and torch.compile on mid-size forward calls
(T 256-1024), and inductor's kernel sources for them."""
import os, sys, statistics, torch, glob, shutil
import torch._dynamo
torch._dynamo.config.recompile_limit = 10000
torch._dynamo.config.cache_size_limit = 10000
from torch.profiler import profile, ProfilerActivity
from miles_ext_kernels.cake import rmsnorm_forward
EPS = 1e-6
dev = torch.device("cuda")
flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
ONLY_OURS = os.environ.get("ONLY_OURS") == "1"
TAG = os.environ.get("TAG", "")

def fp32_formula(x, w):
    hf = x.float()
    r = torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + EPS)
    return (hf * r * w.float()).to(x.dtype)

def kernel_times(fn, cold, n=80):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            if cold: flush.zero_()
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA: continue
        if "fill" in e.name.lower(): continue
        per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return per

shapes = [(T, H) for T in (128, 256, 512, 1024) for H in (1536, 2048, 4096, 5120, 6144, 8192)]
rows = []
for T, H in shapes:
    g = torch.Generator(device=dev).manual_seed(T + H)
    x = torch.randn(T, H, device=dev, generator=g).to(torch.bfloat16)
    w = (torch.rand(H, device=dev, generator=g) + 0.5).to(torch.bfloat16)
    c = {"ours": lambda: rmsnorm_forward(x, w, EPS, backend="first_party", strict=True)}
    if not ONLY_OURS:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        comp = torch.compile(fp32_formula, dynamic=False, fullgraph=True)
        c["compile"] = lambda: comp(x, w)
        c["liger"] = lambda: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "gemma", True)
    for name, fn in c.items():
        cold = kernel_times(fn, True); warm = kernel_times(fn, False)
        kc = sum(statistics.median(v) for v in cold.values())
        kw = sum(statistics.median(v) for v in warm.values())
        rows.append((f"{T}x{H}", name + TAG, kw, kc, ";".join(k[:70] for k in cold)))
print(f"{'shape':12s} {'cand':10s} {'warm':>7s} {'cold':>7s}")
for r in rows:
    print(f"{r[0]:12s} {r[1]:10s} {r[2]:7.2f} {r[3]:7.2f}  {r[4][:100]}")
if not ONLY_OURS:
    out = os.environ.get("OUT", "/tmp")
    srcs = []
    for f in glob.glob("/tmp/torchinductor_*/**/*.py", recursive=True):
        t = open(f).read()
        if "triton_heuristics" in t and ("persistent_reduction" in t or "reduction" in t) and "rsqrt" in t:
            srcs.append(f"# ==== {f}\n{t}")
    open(os.path.join(out, "inductor_kernels.txt"), "w").write("\n".join(srcs))
    print("inductor kernel files:", len(srcs))
