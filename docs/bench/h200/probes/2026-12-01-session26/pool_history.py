"""Session 26, calls 8 and 10: which allocation a torch.compile "reduce-overhead" CUDA-graph tree
finds live in its pool. Runs a compiled RMSNorm step (64 x 1024, BF16) five times with the
tree's allocation history on and prints the first failure with its stack (call 8: the cached
workspace, allocated in `cached_workspace` during the tree's warm-up; call 10: the same, from a
side stream, so the routing is by thread, not by stream)."""
import torch
import torch._inductor.config as cfg

from miles_ext_kernels.cake import RMSNorm

cfg.triton.cudagraph_trees_history_recording = True
DEV = torch.device("cuda")
norm = RMSNorm(1024, dtype=torch.bfloat16, device=DEV)
x = torch.randn(64, 1024, device=DEV).bfloat16()
g = torch.randn_like(x)
compiled = torch.compile(norm, mode="reduce-overhead", fullgraph=True)
for i in range(5):
    inp = x.detach().requires_grad_()
    norm.weight.grad = None
    try:
        y = compiled(inp)
        (y.float() * g.float()).sum().backward()
        torch.cuda.synchronize()
        print("step", i, "ok")
    except Exception as exc:  # noqa: BLE001 - the probe prints it
        msg = str(exc)
        print("step", i, type(exc).__name__)
        print(msg[:600])
        print("\n".join([line for line in msg.splitlines()
                         if "miles_ext_kernels" in line or "Error" in line][:60]))
        break
