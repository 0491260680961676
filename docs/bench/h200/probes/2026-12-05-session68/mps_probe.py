"""Session 68: the deterministic backward in a process that MPS limits to part of the GPU's SMs
(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), where the device reports fewer SMs and step 100's balanced
waves may take the grid. Run once without MPS (mode "ref": saves dx and dw) and once under MPS
(mode "mps": compares with them).

  python mps_probe.py ref|mps /tmp/mps_ref.pt

Prints one JSON line a shape: the SM count the process sees, the CTAs launched (profiler trace),
the median of five means of 20 calls back to back (warm L2, no flush; a ratio within one run
only), and under MPS whether dx and dw have the reference's bits.
"""
import json
import os
import sys

import torch

from miles_ext_kernels.cake import rmsnorm_backward, rmsnorm_workspace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_trace import launched_grid  # noqa: E402

mode, ref_path = sys.argv[1], sys.argv[2]
shapes = [(16384, 2048), (4096, 4096), (65536, 2048), (2048, 8192)]
device = torch.device("cuda")
sms = torch.cuda.get_device_properties(0).multi_processor_count
ref = torch.load(ref_path) if mode == "mps" else {}
for t, h in shapes:
    # Drawn on the CPU: CUDA's generators size their grids by the SM count, so that inputs
    # drawn on the GPU differ under MPS (call 5's first run compared such inputs).
    gen = torch.Generator().manual_seed(t + h)
    x = torch.randn(t, h, dtype=torch.bfloat16, generator=gen).to(device)
    w = (torch.rand(h, dtype=torch.bfloat16, generator=gen) + 0.5).to(device)
    g = torch.randn(t, h, dtype=torch.bfloat16, generator=gen).to(device)
    rstd = (torch.rand(t, dtype=torch.float32, generator=gen) + 0.5).to(device)
    ws = rmsnorm_workspace(h, device, weight_dtype=torch.bfloat16, backend="first_party",
                           strict=True)

    def call(x=x, w=w, g=g, rstd=rstd, ws=ws):
        return rmsnorm_backward(g, x, w, rstd, workspace=ws, backend="first_party", strict=True)

    row = {"shape": f"{t}x{h}", "mode": mode, "sms": sms}
    try:
        dx, dw = call()
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the probe reports any failure as data
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        print(json.dumps(row), flush=True)
        continue
    row["launched"] = launched_grid(call, "backward_deterministic_kernel<")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):  # 20 calls back to back between two events, five times
        start.record()
        for _ in range(20):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / 20)
    row["us"] = round(sorted(times)[len(times) // 2], 2)
    key = f"{t}x{h}"
    if mode == "ref":
        ref[key] = (dx.cpu(), dw.cpu())
    else:
        rdx, rdw = ref[key]
        row["dx_equal"] = torch.equal(dx.cpu(), rdx)
        row["dw_equal"] = torch.equal(dw.cpu(), rdw)
    print(json.dumps(row), flush=True)
if mode == "ref":
    torch.save(ref, ref_path)
