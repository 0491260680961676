"""Session 77: per-CTA timeline of the loop-free forward (cta_stamps.patch: each CTA's start and
end on the global timer and its SM, written over y[row, 0:5]; timing only, y is wrong there).
After the harness's L2 flush, one call per run; per shape and weight type the median over runs of:
the span (last end - first start), the first wave's CTAs' end (median, max), and the CTAs that
started after the first 300 ns (the later waves): count, start (min, median), duration (median,
max). Raw stamps of each configuration's first run go to $OUT/stamps.pt.
  python cta_timeline.py 792x5120,800x5120 [runs]"""
import os
import statistics
import sys

import torch

from benchmarks.rmsnorm import timing
from miles_ext_kernels.cake import rmsnorm_forward

shapes = sys.argv[1].split(",")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
device = torch.device("cuda")
flush = timing.L2Flusher(device)
raw = {}


def stamps(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    v = y.view(torch.int16)[:, :5].to(torch.int64) & 0xFFFF
    start = v[:, 0] | (v[:, 1] << 16)
    end = v[:, 2] | (v[:, 3] << 16)
    base = start[0].item()
    start = (start - base + 2**31) % 2**32 - 2**31
    end = (end - base + 2**31) % 2**32 - 2**31
    t0 = start.min()
    return start - t0, end - t0, v[:, 4]


print("| shape | w | span | wave-1 end med / max | later CTAs | their start min / med | their "
      "duration med / max | wave-1 duration med |")
for shape in shapes:
    t, h = (int(s) for s in shape.split("x"))
    for wname, wdt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        x = torch.randn(t, h, device=device, dtype=torch.bfloat16)
        w = torch.rand(h, device=device, dtype=wdt) + 0.5
        rmsnorm_forward(x, w, 1e-6)
        rows = []
        for i in range(runs):
            flush()
            y, _ = rmsnorm_forward(x, w, 1e-6)
            torch.cuda.synchronize()
            s, e, sm = stamps(y.cpu())
            if i == 0:
                raw[f"{shape}/{wname}"] = torch.stack([s, e, sm])
            late = s > 300
            d = e - s
            first = ~late
            rows.append((
                (e.max()).item(),
                e[first].median().item(), e[first].max().item(),
                int(late.sum()),
                s[late].min().item() if late.any() else 0,
                s[late].median().item() if late.any() else 0,
                d[late].median().item() if late.any() else 0,
                d[late].max().item() if late.any() else 0,
                d[first].median().item(),
            ))
        med = [statistics.median(r[k] for r in rows) for k in range(len(rows[0]))]
        print(f"| {shape} | {wname} | {med[0]:.0f} | {med[1]:.0f} / {med[2]:.0f} | {med[3]:.0f} "
              f"| {med[4]:.0f} / {med[5]:.0f} | {med[6]:.0f} / {med[7]:.0f} | {med[8]:.0f} |")
out = os.environ.get("OUT")
if out:
    torch.save(raw, os.path.join(out, "stamps.pt"))
